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

// TestManualApprovalHoldsTheUpgrade subscribes with manual approval: a published release
// waits in an unapproved InstallPlan, and the installed release keeps running, until a user
// approves it.
func TestManualApprovalHoldsTheUpgrade(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	previous, head := versions[len(versions)-2], versions[len(versions)-1]

	e.publish(t, previous)
	require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{Manual: true}))
	require.NoError(t, e.Approve(ctx, csvName(previous)))
	e.waitRelease(t, previous)
	e.createFleet(t, 6, fleet{})
	before := e.snapshot(t)

	e.publish(t, head)
	plan, err := e.InstallPlanFor(ctx, csvName(head), 3*time.Minute)
	require.NoError(t, err)
	require.False(t, plan.Spec.Approved)
	time.Sleep(10 * time.Second)
	require.NoError(t, e.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan))
	require.Equal(t, operatorsv1alpha1.InstallPlanPhaseRequiresApproval, plan.Status.Phase)
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(head)}, &operatorsv1alpha1.ClusterServiceVersion{})
	require.True(t, apierrors.IsNotFound(err), "nothing is installed before approval: %v", err)
	e.assertFleetUnchanged(t, before)

	require.NoError(t, e.Approve(ctx, csvName(head)))
	e.waitRelease(t, head)
	e.assertFleetUnchanged(t, before)
}
