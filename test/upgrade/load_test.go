package upgrade

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestUpgradeUnderLoad upgrades from the first release to the head with 200 Apps, some of which
// are scaled while the upgrade runs. Every App ends Available with what it asked for, none is
// lost, and no pod of an App left alone restarts.
func TestUpgradeUnderLoad(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	head := versions[len(versions)-1]

	before := e.installWithFleet(t, versions[0], 200, fleet{})

	e.publish(t, head)
	// Scale twenty v1 Apps while OLM replaces the operator under them.
	var wg sync.WaitGroup
	scaled := map[string]bool{}
	for i := 1; i < 40; i += 2 {
		name := fmt.Sprintf("v1-%03d", i)
		scaled[name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			app := e.fleetApp(t, name)
			patch := client.MergeFrom(app.DeepCopy())
			app.Spec.Replicas = ptr.To(*app.Spec.Replicas + 1)
			if err := e.Client.Patch(ctx, app, patch); err != nil {
				t.Errorf("scaling %s during the upgrade: %v", name, err)
			}
		}()
	}
	wg.Wait()
	e.waitRelease(t, head)
	e.waitFleetAvailable(t)

	after := e.snapshot(t)
	require.Len(t, after, len(before), "no App is lost")
	for name, was := range before {
		if !scaled[name] {
			require.Equal(t, was, after[name], "App %s", name)
			continue
		}
		// A scaled App keeps its pods and gains one.
		for _, uid := range strings.Split(strings.SplitN(was, "pods=", 2)[1], ",") {
			require.Contains(t, after[name], uid, "App %s keeps its pods", name)
		}
		require.Equal(t, *e.fleetApp(t, name).Spec.Replicas, e.fleetApp(t, name).Status.AvailableReplicas)
	}
}
