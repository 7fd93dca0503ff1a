package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/monitoring"
	"github.com/mycompany/app-operator/test/localcluster"
)

// The suite installs App Operator on a cluster without the Prometheus Operator's API, and the
// install succeeds. Once that API is served, the manager gives the install its ServiceMonitor
// and its PrometheusRule, owned by the ClusterServiceVersion, so that OLM removes them with it.
func TestMonitoringComesWithTheInstallWhereThePrometheusOperatorRuns(t *testing.T) {
	t.Parallel() // the manager looks for the API once a minute; the other waiting tests wait alongside
	ctx := context.Background()
	ns := localcluster.OperatorsNamespace
	require.NoError(t, cluster.InstallMonitoringAPI(ctx))

	want, err := monitoring.Objects(ns, nil)
	require.NoError(t, err)
	for _, w := range want {
		eventually(t, 90*time.Second, func(c *assert.CollectT) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(w.GroupVersionKind())
			require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(w), got))
			owners := got.GetOwnerReferences()
			require.Len(c, owners, 1)
			require.Equal(c, "ClusterServiceVersion", owners[0].Kind)
			require.Equal(c, headCSV(), owners[0].Name)
			spec, _, _ := unstructured.NestedMap(got.Object, "spec")
			require.Equal(c, w.Object["spec"], spec, "as it ships")
		}, "the manager to apply "+w.GetKind()+" "+w.GetName())
	}
}
