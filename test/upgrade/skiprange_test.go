package upgrade

import (
	"context"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestSkipRangeJumpsToTheHead installs the first release, then publishes every release at once:
// the head's skipRange lets OLM upgrade straight to it, past the releases in between.
func TestSkipRangeJumpsToTheHead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	head := versions[len(versions)-1]

	before := e.installWithFleet(t, versions[0], 12, fleet{mixed: true})

	e.publish(t, head)
	e.waitRelease(t, head)
	e.assertFleetUnchanged(t, before)

	plans := &operatorsv1alpha1.InstallPlanList{}
	require.NoError(t, e.Client.List(ctx, plans, client.InNamespace(localcluster.OperatorsNamespace)))
	for _, p := range plans.Items {
		for _, v := range versions[1 : len(versions)-1] {
			require.NotContains(t, p.Spec.ClusterServiceVersionNames, csvName(v), "OLM skips %s", v)
		}
	}
}
