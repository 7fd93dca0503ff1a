package chaos

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTheOperatorSurvivesCrashes SIGKILLs the manager at 20 random moments while 500 Apps
// converge, and removes its pod at once, as a node that loses it would: the ReplicaSet starts
// a new one each time. (A container killed in place is restarted by the kubelet after a
// back-off that doubles with each crash, which 20 crashes in minutes would stretch to an hour.)
func TestTheOperatorSurvivesCrashes(t *testing.T) {
	const apps, kills = 500, 20
	// A short lease, so that each new manager takes over soon after the one it replaces.
	c := newCluster(t, "--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s")
	ctx := context.Background()
	createNamespace(t, c, "crash")
	start := time.Now()

	// Creations refused while a manager pod is gone, webhooks and all, are retried.
	var wg sync.WaitGroup
	wg.Add(1)
	killed := 0
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		for killed < kills {
			time.Sleep(time.Duration(500+rng.Intn(4000)) * time.Millisecond)
			managers, _, err := c.Managers(ctx)
			if err != nil || len(managers) == 0 {
				continue
			}
			pod := managers[0].Pod
			if err := c.Crash(ctx, pod, "manager"); err != nil {
				t.Errorf("killing the manager: %v", err)
				continue
			}
			if err := c.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				t.Errorf("removing the manager's pod: %v", err)
			}
			killed++
		}
	}()
	retried := createApps(t, c, "crash", 0, apps)
	wg.Wait()
	took := waitConverged(t, c, "crash", apps, 15*time.Minute)
	assertExactlyOneWorkloadEach(t, c, "crash", apps)
	bad := unrecoverable(t, c)
	require.Empty(t, bad, "log lines no retry recovers from")
	figures(t, "apps=%d kills=%d app_creations_retried=%d converged_s=%.1f (after the last App was created: %.1f) unrecoverable_log_lines=%d",
		apps, killed, retried, time.Since(start).Seconds(), took.Seconds(), len(bad))
}
