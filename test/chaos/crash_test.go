package chaos

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTheOperatorSurvivesCrashes SIGKILLs the manager at 20 random moments while 500 Apps
// converge; its kubelet starts it again each time, as Kubernetes would restart the pod.
func TestTheOperatorSurvivesCrashes(t *testing.T) {
	const apps, kills = 500, 20
	// A short lease, so that each restarted manager takes over soon after the one it replaces.
	c := newCluster(t, "--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s")
	k := runKubelet(t, c)
	ctx := context.Background()
	createNamespace(t, c, "crash")

	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range apps {
			if err := c.Client.Create(ctx, newApp("crash", i)); err != nil {
				t.Errorf("creating App %d: %v", i, err)
			}
		}
	}()
	killed := 0
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		for killed < kills {
			time.Sleep(time.Duration(500+rng.Intn(4000)) * time.Millisecond)
			if op := k.Operator(); op != nil && !op.Exited() {
				if err := op.Kill(); err != nil {
					t.Errorf("killing the manager: %v", err)
				}
				killed++
			}
		}
	}()
	wg.Wait()
	took := waitConverged(t, c, "crash", apps, 15*time.Minute)

	assertExactlyOneWorkloadEach(t, c, "crash", apps)
	bad := unrecoverable(t, c)
	require.Empty(t, bad, "log lines no retry recovers from")
	figures(t, "apps=%d kills=%d converged_s=%.1f (after the last App was created: %.1f) unrecoverable_log_lines=%d",
		apps, killed, time.Since(start).Seconds(), took.Seconds(), len(bad))
}
