package upgrade

import (
	"context"
	"slices"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// backThroughEveryRelease goes back from the head to the first release, one release at a
// time, the way OLM allows it: delete the Subscription and the ClusterServiceVersion, then
// subscribe again starting at the release before, with manual approval. So it crosses every
// step of the release plan backwards: v1alpha1 back in the CRD (1.0.0 to 0.6.0), served again
// (0.6.0 to 0.5.0) and the storage switch (0.2.0 to 0.1.0). At each step every App keeps its
// spec, v1-only fields included, and no workload's pod template changes, under a client
// writing and reading Apps; the Subscription shows the catalog's deprecation of the release it
// installed; and OLM plans the upgrade from it to the release the record says (internal/release:
// Next), straight to the head or, from 0.1.0, to 0.6.0. Then the first release, running
// again, reconciles a change. It returns the fleet with that change.
func (e *env) backThroughEveryRelease(t *testing.T, versions []string, before fleetState) fleetState {
	ctx := context.Background()
	stored := storedVersions(versions[len(versions)-1])
	for i := len(versions) - 1; i > 0; i-- {
		from, to := versions[i], versions[i-1]
		// The API server adds the storage version of the CRD it is given to storedVersions.
		if s := storedVersions(to)[0]; !slices.Contains(stored, s) {
			stored = append(stored, s)
		}
		e.probe(t, "rollback to "+to, from, to, func() {
			require.NoError(t, e.Uninstall(ctx))
			require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{StartingCSV: csvName(to), Manual: true}))
			require.NoError(t, e.Approve(ctx, csvName(to)))
			e.waitSettled(t, to, stored)
		})
		e.assertFleetUnchanged(t, before)
		e.assertDeprecation(t, to)
		e.assertPlannedUpgrade(t, to)
	}

	// The older operator keeps reconciling: a change made now reaches the workload.
	app := e.fleetApp(t, "v1-001")
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.PodAnnotations = map[string]string{"rolled-back": "true"}
	require.NoError(t, e.Client.Patch(ctx, app, patch))
	e.waitFleetAvailable(t)
	return e.snapshot(t)
}

// forwardUnderLoad goes from the first release, which a rollback left installed under manual
// approval, to the head. OLM's path goes through the releases that migrate what the first
// release stored (internal/release: Path), one InstallPlan each, past the releases in between
// (their skipRanges). Manual approval holds the first plan: nothing of it is installed and the
// first release keeps running until a user approves it. Twenty Apps are scaled as it is
// approved. Each approval comes once the release before has settled, its migration done; every
// App ends Available with what it asked for, none is lost, and no pod of an App left alone
// restarts, on the fake nodes or the real one.
func (e *env) forwardUnderLoad(t *testing.T, versions []string, before fleetState) {
	ctx := context.Background()
	first, head := versions[0], versions[len(versions)-1]
	path, err := e.rel.Record.Path(first)
	require.NoError(t, err)
	require.Equal(t, head, path[len(path)-1])

	plan, err := e.InstallPlanFor(ctx, csvName(path[1]), 3*time.Minute)
	require.NoError(t, err)
	require.False(t, plan.Spec.Approved)
	time.Sleep(10 * time.Second)
	require.NoError(t, e.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan))
	require.Equal(t, operatorsv1alpha1.InstallPlanPhaseRequiresApproval, plan.Status.Phase)
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(path[1])}, &operatorsv1alpha1.ClusterServiceVersion{})
	require.True(t, apierrors.IsNotFound(err), "nothing is installed before approval: %v", err)
	_, running, err := e.Managers(ctx)
	require.NoError(t, err)
	require.Equal(t, csvName(first), running, "the first release keeps running")
	e.assertFleetUnchanged(t, before)

	for i := 1; i < len(path); i++ {
		from, to := path[i-1], path[i]
		var scaled map[string]int32
		e.probe(t, "forward to "+to, from, to, func() {
			if i == 1 {
				scaled = e.scaleTwentyAppsWhile(t, func() { require.NoError(t, e.Approve(ctx, csvName(to))) })
			} else {
				require.NoError(t, e.Approve(ctx, csvName(to)))
			}
			e.waitRelease(t, to)
		})
		if scaled != nil {
			before = e.assertScaledOnly(t, before, scaled)
		} else {
			e.assertFleetUnchanged(t, before)
		}
		e.assertDeprecation(t, to)
	}
	e.assertPlannedOnly(t, versions, path)
	require.NoError(t, e.WaitForCSVGone(ctx, csvName(first), time.Minute))
}

// assertPlannedUpgrade checks that OLM, under manual approval, plans the upgrade from an
// installed release to the one the release record says, and waits for approval.
func (e *env) assertPlannedUpgrade(t *testing.T, installed string) {
	t.Helper()
	next, err := e.rel.Record.Next(installed)
	require.NoError(t, err)
	plan, err := e.InstallPlanFor(context.Background(), csvName(next), 2*time.Minute)
	require.NoError(t, err)
	require.False(t, plan.Spec.Approved, "the upgrade from %s to %s waits for approval", installed, next)
}
