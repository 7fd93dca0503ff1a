package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
func leader(t *testing.T, token string, ops ...*localcluster.Operator) *localcluster.Operator {
	t.Helper()
	for _, op := range ops {
		if op.Exited() {
			continue
		}
		f, err := localcluster.NewScraper(op.MetricsURL, token).Families(context.Background())
		if err != nil {
			continue
		}
		if v, err := localcluster.Gauge(f, "leader_election_master_status", "name", "app-operator.mycompany.com"); err == nil && v == 1 {
			return op
		}
	}
	return nil
}

// TestAStandbyTakesOverFromTheLeader runs two managers with leader election. When the leader
// is killed, the standby leads within a lease duration and two of its attempts, and reconciles.
// When the leader stops gracefully, it releases the lease and the standby leads within 2 s.
func TestAStandbyTakesOverFromTheLeader(t *testing.T) {
	args := []string{"--leader-election-lease-duration=" + leaseDuration.String(), "--leader-election-retry-period=" + retryPeriod.String()}
	c := newCluster(t, args...)
	ctx := context.Background()
	token, err := c.MetricsReaderToken(ctx, "default", "chaos-scraper")
	require.NoError(t, err)
	require.NoError(t, c.WaitForConversionWebhook(ctx))
	a, err := c.RunOperator(ctx, "manager-a", manager())
	require.NoError(t, err)
	b, err := c.RunOperator(ctx, "manager-b", manager())
	require.NoError(t, err)
	createNamespace(t, c, "failover")

	waitLeader := func(from time.Time, ops ...*localcluster.Operator) (*localcluster.Operator, time.Duration) {
		var l *localcluster.Operator
		require.NoError(t, c.Poll(ctx, time.Minute, "a manager to lead", func(context.Context) (bool, error) {
			l = leader(t, token, ops...)
			return l != nil, nil
		}))
		return l, time.Since(from)
	}
	first, _ := waitLeader(time.Now(), a, b)
	standby := map[*localcluster.Operator]*localcluster.Operator{a: b, b: a}[first]

	// The leader dies.
	killedAt := time.Now()
	require.NoError(t, first.Kill())
	app := newApp("failover", 1)
	require.NoError(t, c.Client.Create(ctx, app))
	_, leadAfter := waitLeader(killedAt, standby)
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), time.Minute))
	reconciledAfter := time.Since(killedAt)
	// The standby sees the leader's last renewal at its next attempt, counts the lease duration
	// from then, and takes the lease at its first attempt after; a second more for the metrics
	// to show it.
	require.LessOrEqual(t, leadAfter, leaseDuration+2*attemptInterval+time.Second, "the standby leads within a lease duration and two of its attempts")

	// A new standby; then the leader stops gracefully and releases the lease.
	third, err := c.RunOperator(ctx, "manager-c", manager())
	require.NoError(t, err)
	time.Sleep(2 * time.Second)
	stoppedAt := time.Now()
	require.NoError(t, standby.Stop(30*time.Second))
	_, handover := waitLeader(stoppedAt, third)
	require.LessOrEqual(t, handover, 2*time.Second, "release-on-cancel hands over at once")
	second := newApp("failover", 2)
	require.NoError(t, c.Client.Create(ctx, second))
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(second), time.Minute))

	figures(t, "lease_duration_s=%.0f retry_period_s=%.1f killed_leader_to_new_leader_s=%.1f killed_leader_to_reconciled_s=%.1f graceful_handover_s=%.2f",
		leaseDuration.Seconds(), retryPeriod.Seconds(), leadAfter.Seconds(), reconciledAfter.Seconds(), handover.Seconds())
}
