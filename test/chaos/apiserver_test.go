package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTheOperatorRecoversFromAnAPIServerRestart restarts kube-apiserver while 200 Apps
// converge. The operator reconnects and converges them without being restarted itself.
func TestTheOperatorRecoversFromAnAPIServerRestart(t *testing.T) {
	const apps = 200
	c := newCluster(t)
	ctx := context.Background()
	createNamespace(t, c, "restart")
	before, err := c.WaitForManager(ctx, headCSV(t), time.Minute)
	require.NoError(t, err)

	retried := createApps(t, c, "restart", 0, apps/2)
	down := time.Now()
	require.NoError(t, c.RestartAPIServer(ctx))
	downtime := time.Since(down)
	retried += createApps(t, c, "restart", apps/2, apps)
	took := waitConverged(t, c, "restart", apps, 10*time.Minute)

	after, err := c.WaitForManager(ctx, headCSV(t), time.Minute)
	require.NoError(t, err)
	require.Equal(t, before.Pod.UID, after.Pod.UID, "the manager's pod was not replaced")
	require.Zero(t, after.Pod.Status.ContainerStatuses[0].RestartCount, "the manager was not restarted")
	assertExactlyOneWorkloadEach(t, c, "restart", apps)
	require.Empty(t, unrecoverable(t, c))
	figures(t, "apps=%d apiserver_downtime_s=%.1f converged_after_restart_s=%.1f manager_restarts=0 app_creations_retried=%d",
		apps, downtime.Seconds(), took.Seconds(), retried)
}
