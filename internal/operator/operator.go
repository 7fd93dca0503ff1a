// Package operator wires App Operator into a controller-runtime manager: the scheme, the
// cache, the App controller, the webhooks and the metrics. The manager command and the
// integration tests share it, so tests run the operator exactly as it ships.
package operator

import (
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/cachesync"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/internal/metrics"
	"github.com/mycompany/app-operator/internal/monitoring"
	appwebhook "github.com/mycompany/app-operator/internal/webhook"
)

// Options configure the operator's parts.
type Options struct {
	// Controllers runs the App controller and the monitoring installer, behind leader
	// election; Webhooks serves the defaulting and validating webhooks. A process runs either
	// or both.
	Controllers, Webhooks bool
	// MaxConcurrentReconciles is the number of Apps reconciled at the same time.
	MaxConcurrentReconciles int
	// Desired is passed to the builders of an App's children.
	Desired desired.Options
	// CSV names the ClusterServiceVersion that installed the manager, in the manager's
	// namespace, where the monitoring objects go, owned by it, and where OLM keeps the
	// webhooks' certificate; its name is empty when OLM did not install the manager.
	CSV client.ObjectKey
	// InstallMonitoring applies the ServiceMonitor and PrometheusRule where the Prometheus
	// Operator runs; off where the install carries them itself (the Helm chart).
	InstallMonitoring bool
	// FillGCPercent, if above 0, is the collector's pace while the controller's caches first
	// fill (see FillGCPercent); 0 leaves the collector alone.
	FillGCPercent int
}

// Scheme holds every type the operator reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(appv1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// Setup adds the operator's parts that o asks for to a manager built with Scheme and
// CacheOptions.
func Setup(mgr ctrl.Manager, o Options) error {
	if !o.Controllers && !o.Webhooks {
		return fmt.Errorf("nothing to run: neither the controllers nor the webhooks")
	}
	if o.Webhooks {
		if err := setupWebhooks(mgr, o.CSV); err != nil {
			return err
		}
	}
	if !o.Controllers {
		return nil
	}
	return setupControllers(mgr, o)
}

// The keeper of the webhooks' certificate patches the Secret OLM keeps it in, and nothing else.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,resourceNames=app-operator-controller-manager-service-cert,verbs=patch

// setupWebhooks adds the App webhooks and, under OLM, the keeper of their certificate, which
// the pod's readiness waits for.
func setupWebhooks(mgr ctrl.Manager, csv client.ObjectKey) error {
	if err := appwebhook.Setup(mgr); err != nil {
		return fmt.Errorf("setting up the App webhooks: %w", err)
	}
	if csv.Namespace == "" || csv.Name == "" {
		return nil // not installed by OLM
	}
	keeper := &appwebhook.CertificateKeeper{Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), CSV: csv,
		Log: mgr.GetLogger().WithName("certificate")}
	if err := mgr.Add(keeper); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("certificate", keeper.Ready)
}

// setupControllers adds the operator's metrics, the App controller and, in a pod, the
// monitoring installer.
func setupControllers(mgr ctrl.Manager, o Options) error {
	if o.MaxConcurrentReconciles < 1 {
		return fmt.Errorf("max concurrent reconciles must be 1 or more, got %d", o.MaxConcurrentReconciles)
	}
	if err := metrics.Register(ctrlmetrics.Registry, mgr.GetCache()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	writes := &cachesync.Tracker{}
	reconciler := &controllers.AppReconciler{
		Client:   mgr.GetClient(),
		Reader:   mgr.GetAPIReader(),
		Applier:  &apply.Applier{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Writes: writes},
		Recorder: mgr.GetEventRecorder(controllers.ControllerName),
		Options:  o.Desired,
		Writes:   writes,
	}
	if err := reconciler.SetupWithManager(mgr, o.MaxConcurrentReconciles); err != nil {
		return fmt.Errorf("setting up the App controller: %w", err)
	}
	if o.FillGCPercent > 0 {
		if err := mgr.Add(&cacheFill{cache: mgr.GetCache(), kinds: watched(), percent: o.FillGCPercent,
			log: mgr.GetLogger().WithName("cache")}); err != nil {
			return err
		}
	}
	if o.CSV.Namespace == "" || !o.InstallMonitoring {
		return nil // not in a pod (nowhere to put the monitoring objects), or not asked to
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	return mgr.Add(&monitoring.Installer{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Discovery: dc,
		Namespace: o.CSV.Namespace, CSV: o.CSV.Name, Interval: time.Minute,
		Log: mgr.GetLogger().WithName("monitoring")})
}
