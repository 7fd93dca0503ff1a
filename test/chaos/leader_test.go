package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 500 * time.Millisecond
	// attemptInterval is the longest time between two of a standby's attempts to take the
	// lease: client-go jitters the retry period by up to 1.2 times itself.
	attemptInterval = retryPeriod * 22 / 10
)

// leader returns which of the managers leads, from their leader_election_master_status.
func leader(token string, managers ...*localcluster.Manager) *localcluster.Manager {
	for _, m := range managers {
		f, err := localcluster.NewScraper(m.MetricsURL, token).Families(context.Background())
		if err != nil {
			continue
		}
		if v, err := localcluster.Gauge(f, "leader_election_master_status", "name", "app-operator.mycompany.com"); err == nil && v == 1 {
			return m
		}
	}
	return nil
}

// TestAStandbyTakesOverFromTheLeader runs two replicas of the manager with leader election.
// When the leader is killed (SIGKILL), the standby leads within a lease duration and two of its
// attempts, and reconciles. When the leader's pod is deleted, it stops gracefully, releases the
// lease, and the standby (the killed one, restarted by the kubelet) leads within 2 s.
func TestAStandbyTakesOverFromTheLeader(t *testing.T) {
	args := []string{"--leader-election-lease-duration=" + leaseDuration.String(), "--leader-election-retry-period=" + retryPeriod.String()}
	c := newCluster(t, args...)
	ctx := context.Background()
	csv := headCSV(t)
	require.NoError(t, c.EditManager(ctx, csv, func(d *appsv1.DeploymentSpec) { d.Replicas = ptr.To(int32(2)) }))
	require.NoError(t, c.Poll(ctx, 3*time.Minute, "two managers to run", func(ctx context.Context) (bool, error) {
		managers, _, err := c.Managers(ctx)
		return len(managers) == 2, err
	}))
	token, err := c.MetricsReaderToken(ctx, "default", "chaos-scraper")
	require.NoError(t, err)
	createNamespace(t, c, "failover")

	waitLeader := func(from time.Time) (*localcluster.Manager, time.Duration) {
		var l *localcluster.Manager
		require.NoError(t, c.Poll(ctx, time.Minute, "a manager to lead", func(ctx context.Context) (bool, error) {
			managers, _, err := c.Managers(ctx)
			l = leader(token, managers...)
			return l != nil, err
		}))
		return l, time.Since(from)
	}
	first, _ := waitLeader(time.Now())

	// The leader dies.
	killedAt := time.Now()
	require.NoError(t, c.Crash(ctx, first.Pod, "manager"))
	app := newApp("failover", 1)
	require.NoError(t, c.Client.Create(ctx, app))
	second, leadAfter := waitLeader(killedAt)
	require.NotEqual(t, first.Pod.UID, second.Pod.UID, "the standby leads")
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), time.Minute))
	reconciledAfter := time.Since(killedAt)
	// The standby sees the leader's last renewal at its next attempt, counts the lease duration
	// from then, and takes the lease at its first attempt after; a second more for the metrics
	// to show it.
	require.LessOrEqual(t, leadAfter, leaseDuration+2*attemptInterval+time.Second, "the standby leads within a lease duration and two of its attempts")

	// The killed manager runs again as the standby; then the leader's pod is deleted, and it
	// stops gracefully and releases the lease.
	require.NoError(t, c.Poll(ctx, 2*time.Minute, "two managers to run", func(ctx context.Context) (bool, error) {
		managers, _, err := c.Managers(ctx)
		return len(managers) == 2, err
	}))
	stoppedAt := time.Now()
	require.NoError(t, c.Client.Delete(ctx, second.Pod))
	third, handover := waitLeader(stoppedAt)
	require.NotEqual(t, second.Pod.UID, third.Pod.UID)
	require.LessOrEqual(t, handover, 2*time.Second, "release-on-cancel hands over at once")
	next := newApp("failover", 2)
	require.NoError(t, c.Client.Create(ctx, next))
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(next), time.Minute))

	figures(t, "lease_duration_s=%.0f retry_period_s=%.1f killed_leader_to_new_leader_s=%.1f killed_leader_to_reconciled_s=%.1f graceful_handover_s=%.2f",
		leaseDuration.Seconds(), retryPeriod.Seconds(), leadAfter.Seconds(), reconciledAfter.Seconds(), handover.Seconds())
}
