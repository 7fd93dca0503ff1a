package monitoring

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestObjectsAreTheShippedOnesInTheManagersNamespace(t *testing.T) {
	owner := &metav1.OwnerReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Name: "app-operator.v0.5.0", UID: "csv-uid"}
	objs, err := Objects("operators", owner)
	require.NoError(t, err)
	require.Len(t, objs, 2)
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[o.GetKind()] = o.GetName()
		require.Equal(t, "operators", o.GetNamespace())
		require.Equal(t, []metav1.OwnerReference{*owner}, o.GetOwnerReferences())
		require.NotContains(t, o.GetLabels(), "app.kubernetes.io/managed-by", "not kustomize's")
		require.Equal(t, "monitoring.coreos.com/v1", o.GetAPIVersion())
	}
	require.Equal(t, map[string]string{"ServiceMonitor": "app-operator-controller-manager-metrics-monitor", "PrometheusRule": "app-operator-rules"}, kinds)

	rules, found, err := unstructuredRules(objs)
	require.NoError(t, err)
	require.True(t, found)
	for _, alert := range []string{"AppOperatorDown", "AppOperatorReconcileErrors", "AppNotAvailable", "AppDegraded", "AppOperatorWorkqueueGrowing"} {
		require.Contains(t, rules, alert)
	}
}

// unstructuredRules lists the alerts of the PrometheusRule among objs.
func unstructuredRules(objs []*unstructured.Unstructured) ([]string, bool, error) {
	for _, o := range objs {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		var alerts []string
		groups, _, err := unstructured.NestedSlice(o.Object, "spec", "groups")
		if err != nil {
			return nil, false, err
		}
		for _, g := range groups {
			for _, r := range g.(map[string]any)["rules"].([]any) {
				alerts = append(alerts, r.(map[string]any)["alert"].(string))
			}
		}
		return alerts, true, nil
	}
	return nil, false, nil
}

func discoveryServing(resources ...string) *fakediscovery.FakeDiscovery {
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	if len(resources) > 0 {
		list := &metav1.APIResourceList{GroupVersion: GroupVersion.String()}
		for _, r := range resources {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: r, Namespaced: true})
		}
		d.Resources = []*metav1.APIResourceList{list}
	}
	return d
}

func installer(t *testing.T, d *fakediscovery.FakeDiscovery) (*Installer, *[]string) {
	t.Helper()
	var applied []string
	csv := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "app-operator.v0.5.0", UID: "csv-uid"}}
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(csv).WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(_ context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
			u, ok := obj.(interface{ GetKind() string })
			if !ok {
				t.Fatalf("applied %T, not an unstructured object", obj)
			}
			applied = append(applied, u.GetKind())
			return nil
		},
	}).Build()
	return &Installer{Client: c, Reader: c, Discovery: d, Namespace: "operators", CSV: "app-operator.v0.5.0"}, &applied
}

func TestWithoutThePrometheusOperatorsAPINothingIsApplied(t *testing.T) {
	for _, d := range []*fakediscovery.FakeDiscovery{discoveryServing(), discoveryServing("servicemonitors")} {
		i, applied := installer(t, d)
		served, err := i.Sync(context.Background())
		require.NoError(t, err)
		require.False(t, served)
		require.Empty(t, *applied)
	}
}

func TestWithThePrometheusOperatorsAPIBothAreApplied(t *testing.T) {
	i, applied := installer(t, discoveryServing("servicemonitors", "prometheusrules", "podmonitors"))
	served, err := i.Sync(context.Background())
	require.NoError(t, err)
	require.True(t, served)
	require.ElementsMatch(t, []string{"ServiceMonitor", "PrometheusRule"}, *applied)
}

func TestAMissingClusterServiceVersionIsReported(t *testing.T) {
	i, applied := installer(t, discoveryServing("servicemonitors", "prometheusrules"))
	i.CSV = "app-operator.v9.9.9"
	_, err := i.Sync(context.Background())
	require.ErrorContains(t, err, "reading ClusterServiceVersion operators/app-operator.v9.9.9, the owner of the monitoring objects")
	require.Empty(t, *applied)
}
