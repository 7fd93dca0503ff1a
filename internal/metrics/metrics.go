// Package metrics defines App Operator's Prometheus metrics: the rate, errors and duration of
// reconciles, and the number of Apps in each condition. They are served with
// controller-runtime's own metrics on the manager's authenticated metrics endpoint.
package metrics

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

var (
	// ReconcileCount counts reconciles by controller.
	ReconcileCount = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operator_reconcile_count",
		Help: "Number of reconciles, by controller.",
	}, []string{"controller"})

	// ReconcileErrors counts failed reconciles by controller and reason: the API status reason
	// of the error (Conflict, Forbidden, ...), NotOwned, or Other.
	ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operator_reconcile_errors_total",
		Help: "Number of reconciles that failed, by controller and reason.",
	}, []string{"controller", "reason"})

	// ReconcileDuration observes how long reconciles take, by controller.
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "operator_reconcile_duration_seconds",
		Help:    "Time a reconcile takes, by controller.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"controller"})
)

// Register adds the operator's metrics to a registry, with a collector that counts Apps by
// condition from reader (the manager's cache) at each scrape.
func Register(reg prometheus.Registerer, reader client.Reader) error {
	return errors.Join(
		reg.Register(ReconcileCount),
		reg.Register(ReconcileErrors),
		reg.Register(ReconcileDuration),
		reg.Register(&appsCollector{reader: reader}),
	)
}

var (
	appsDesc = prometheus.NewDesc("operator_apps",
		"Number of Apps, by condition type and status.", []string{"condition", "status"}, nil)
	appConditionDesc = prometheus.NewDesc("operator_app_condition",
		"The status of each condition of each App: 1 for the status it has.", []string{"namespace", "name", "type", "status"}, nil)
)

// appsCollector reports Apps by condition when scraped, from the cache, so that its gauges
// are never stale: per App (operator_app_condition, for alerts on one App) and counted
// (operator_apps, for dashboards).
type appsCollector struct {
	reader client.Reader
}

func (c *appsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- appsDesc
	ch <- appConditionDesc
}

func (c *appsCollector) Collect(ch chan<- prometheus.Metric) {
	// The Apps are only read: listing them without copies keeps a scrape from allocating a
	// second copy of every App in the cache.
	var apps appv1.AppList
	if err := c.reader.List(context.Background(), &apps, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(appsDesc, err)
		return
	}
	type key struct{ condition, status string }
	types := []string{appv1.ConditionAvailable, appv1.ConditionProgressing, appv1.ConditionDegraded}
	counts := map[key]int{}
	for _, t := range types {
		for _, s := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown} {
			counts[key{t, string(s)}] = 0
		}
	}
	for i := range apps.Items {
		for _, t := range types {
			s := metav1.ConditionUnknown
			if cond := meta.FindStatusCondition(apps.Items[i].Status.Conditions, t); cond != nil {
				s = cond.Status
			}
			counts[key{t, string(s)}]++
			ch <- prometheus.MustNewConstMetric(appConditionDesc, prometheus.GaugeValue, 1,
				apps.Items[i].Namespace, apps.Items[i].Name, t, string(s))
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(appsDesc, prometheus.GaugeValue, float64(n), k.condition, k.status)
	}
}
