package upgrade

import (
	"context"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestRollbackToThePreviousReleaseAndForward goes back from the head to the previous release
// the way OLM allows it: delete the Subscription and the ClusterServiceVersion, then subscribe
// again starting at the previous release, with manual approval. Every App, with its v1-only
// fields, is served by the older operator without a restart. The upgrade to the head then
// waits in an unapproved InstallPlan, the older release running, until a user approves it.
func TestRollbackToThePreviousReleaseAndForward(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	head, previous := versions[len(versions)-1], versions[len(versions)-2]

	before := e.installWithFleet(t, head, 12, fleet{real: 4})

	e.probe(t, "rollback to "+previous, func() {
		require.NoError(t, e.Uninstall(ctx))
		require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{StartingCSV: csvName(previous), Manual: true}))
		require.NoError(t, e.Approve(ctx, csvName(previous)))
		e.waitRelease(t, previous)
	})
	e.assertFleetUnchanged(t, before)

	// The older operator keeps reconciling: a change made now reaches the workload.
	app := e.fleetApp(t, "v1-001")
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.PodAnnotations = map[string]string{"rolled-back": "true"}
	require.NoError(t, e.Client.Patch(ctx, app, patch))
	e.waitFleetAvailable(t)
	before = e.snapshot(t)

	// Manual approval holds the upgrade to the head: its plan waits, nothing of it is installed.
	plan, err := e.InstallPlanFor(ctx, csvName(head), 3*time.Minute)
	require.NoError(t, err)
	require.False(t, plan.Spec.Approved)
	time.Sleep(10 * time.Second)
	require.NoError(t, e.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan))
	require.Equal(t, operatorsv1alpha1.InstallPlanPhaseRequiresApproval, plan.Status.Phase)
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(head)}, &operatorsv1alpha1.ClusterServiceVersion{})
	require.True(t, apierrors.IsNotFound(err), "nothing is installed before approval: %v", err)
	_, running, err := e.Managers(ctx)
	require.NoError(t, err)
	require.Equal(t, csvName(previous), running, "the older release keeps running")
	e.assertFleetUnchanged(t, before)

	e.probe(t, "forward to "+head, func() {
		require.NoError(t, e.Approve(ctx, csvName(head)))
		e.waitRelease(t, head)
	})
	e.assertFleetUnchanged(t, before)
	key := client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(previous)}
	require.NoError(t, e.Poll(ctx, time.Minute, "OLM to remove "+csvName(previous), func(ctx context.Context) (bool, error) {
		err := e.Client.Get(ctx, key, &operatorsv1alpha1.ClusterServiceVersion{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}))
}
