package upgrade

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestSkipRangeJumpUnderLoad installs the first release with 200 Apps, then publishes every
// release at once, while twenty Apps are scaled. The skipRanges let OLM jump past the releases
// in between, along the path the release record gives (internal/release: Path): from 0.1.0,
// whose Apps are stored as v1alpha1, to 0.6.0, which migrates them, then to the head, whose CRD
// no longer has v1alpha1. Every App ends Available with what it asked for, none is lost, and no
// pod of an App left alone restarts, on the fake nodes or the real one.
func TestSkipRangeJumpUnderLoad(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	head := versions[len(versions)-1]
	before := e.installWithFleet(t, versions[0], 200, fleet{real: 6})

	e.publish(t, head)
	// Scale twenty v1 Apps while OLM replaces the operator under them.
	var wg sync.WaitGroup
	scaled := map[string]bool{}
	for i := 11; i < 50; i += 2 {
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
	path, err := e.rel.Record.Path(versions[0])
	require.NoError(t, err)
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
		for _, pod := range strings.Split(strings.SplitN(was, "pods=", 2)[1], ",") {
			require.Contains(t, after[name], pod, "App %s keeps its pods", name)
		}
		require.Equal(t, *e.fleetApp(t, name).Spec.Replicas, e.fleetApp(t, name).Status.AvailableReplicas)
	}

	plans := &operatorsv1alpha1.InstallPlanList{}
	require.NoError(t, e.Client.List(ctx, plans, client.InNamespace(localcluster.OperatorsNamespace)))
	var planned []string
	for _, p := range plans.Items {
		planned = append(planned, p.Spec.ClusterServiceVersionNames...)
	}
	for _, v := range versions[1:] {
		require.Equal(t, slices.Contains(path, v), slices.Contains(planned, csvName(v)), "OLM installs %s only if it is on the path %v: planned %v", v, path, planned)
	}
}
