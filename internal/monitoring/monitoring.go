// Package monitoring gives App Operator's install its monitoring where the cluster runs the
// Prometheus Operator: a ServiceMonitor that scrapes the manager's metrics and the
// PrometheusRule of its alerts, each linking its runbook. An OLM bundle cannot carry them: its
// install would fail on a cluster without the monitoring.coreos.com API. So the manager looks
// for that API when it starts, and again every Interval, and applies both objects in its own
// namespace, owned by its ClusterServiceVersion, which OLM deletes on uninstall.
//
// servicemonitor.yaml and prometheusrule.yaml are the objects as they ship; make manifests
// copies them to config/prometheus for installs with kustomize.
package monitoring

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/olm"
)

var (
	//go:embed servicemonitor.yaml
	serviceMonitorYAML []byte
	//go:embed prometheusrule.yaml
	prometheusRuleYAML []byte
)

// GroupVersion is the Prometheus Operator's API.
var GroupVersion = schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}

// FieldOwner applies the monitoring objects.
const FieldOwner = "app-operator"

// Objects returns the ServiceMonitor and the PrometheusRule as they are applied in namespace,
// owned by owner when it is set.
func Objects(namespace string, owner *metav1.OwnerReference) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, raw := range [][]byte{serviceMonitorYAML, prometheusRuleYAML} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			return nil, err
		}
		u.SetNamespace(namespace)
		// As config/default's namePrefix names them.
		u.SetName("app-operator-" + u.GetName())
		labels := u.GetLabels()
		delete(labels, "app.kubernetes.io/managed-by")
		u.SetLabels(labels)
		if owner != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{*owner})
		}
		out = append(out, u)
	}
	return out, nil
}

// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=system,resources=servicemonitors;prometheusrules,verbs=get;create;patch

// Installer applies the monitoring objects wherever the Prometheus Operator's API is served.
type Installer struct {
	// Client applies the objects; Reader reads the ClusterServiceVersion, past the manager's
	// cache.
	Client    client.Client
	Reader    client.Reader
	Discovery discovery.DiscoveryInterface
	// Namespace is the manager's; CSV, when set, names the ClusterServiceVersion that installed
	// it, which owns the objects.
	Namespace string
	CSV       string
	// Interval is how often to look for the API again.
	Interval time.Duration
	Log      logr.Logger
}

// Start looks for the Prometheus Operator's API now and every Interval, until ctx ends, and
// applies the objects when it is served. Failures are logged and tried again.
func (i *Installer) Start(ctx context.Context) error {
	t := time.NewTicker(i.Interval)
	defer t.Stop()
	served := false
	for {
		ok, err := i.Sync(ctx)
		switch {
		case err != nil:
			i.Log.Error(err, "applying the ServiceMonitor and PrometheusRule")
		case ok && !served:
			i.Log.Info("the Prometheus Operator's API is served: applied the ServiceMonitor and PrometheusRule", "namespace", i.Namespace)
		case !ok && !served:
			i.Log.V(1).Info("the Prometheus Operator's API is not served: no ServiceMonitor or PrometheusRule")
		}
		served = ok && err == nil
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sync applies the objects when the API is served, and reports whether it is.
func (i *Installer) Sync(ctx context.Context) (bool, error) {
	resources, err := i.Discovery.ServerResourcesForGroupVersion(GroupVersion.String())
	if err != nil || !serves(resources, "servicemonitors", "prometheusrules") {
		return false, nil //nolint:nilerr // the API is not served: nothing to apply
	}
	owner, err := i.owner(ctx)
	if err != nil {
		return true, err
	}
	objs, err := Objects(i.Namespace, owner)
	if err != nil {
		return true, err
	}
	for _, u := range objs {
		if err := i.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return true, fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return true, nil
}

// owner is the reference to the ClusterServiceVersion that installed the manager, if any.
func (i *Installer) owner(ctx context.Context) (*metav1.OwnerReference, error) {
	if i.CSV == "" {
		return nil, nil
	}
	owner, err := olm.Owner(ctx, i.Reader, client.ObjectKey{Namespace: i.Namespace, Name: i.CSV})
	if err != nil {
		return nil, fmt.Errorf("reading ClusterServiceVersion %s/%s, the owner of the monitoring objects: %w", i.Namespace, i.CSV, err)
	}
	return &owner, nil
}

func serves(list *metav1.APIResourceList, names ...string) bool {
	found := 0
	for _, want := range names {
		for _, r := range list.APIResources {
			if r.Name == want {
				found++
				break
			}
		}
	}
	return found == len(names)
}
