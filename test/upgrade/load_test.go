package upgrade

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// scaleTwentyAppsWhile scales twenty v1 Apps of the fleet up by one, all at once and while do
// runs, and returns the replicas each of them asked for.
func (e *env) scaleTwentyAppsWhile(t *testing.T, do func()) map[string]int32 {
	t.Helper()
	ctx := context.Background()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		scaled = map[string]int32{}
	)
	for i := 11; i < 50; i += 2 {
		name := fmt.Sprintf("v1-%03d", i)
		wg.Go(func() {
			app := &appv1.App{}
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: fleetNamespace, Name: name}, app); err != nil {
				t.Errorf("reading %s to scale it: %v", name, err)
				return
			}
			patch := client.MergeFrom(app.DeepCopy())
			app.Spec.Replicas = ptr.To(*app.Spec.Replicas + 1)
			if err := e.Client.Patch(ctx, app, patch); err != nil {
				t.Errorf("scaling %s: %v", name, err)
				return
			}
			mu.Lock()
			scaled[name] = *app.Spec.Replicas
			mu.Unlock()
		})
	}
	do()
	wg.Wait()
	require.Len(t, scaled, 20)
	return scaled
}

// assertScaledOnly checks that the scaled Apps have the replicas they asked for, every one
// Available, and keep the pods they had, while every other App is as it was. It returns the
// fleet as it now stands.
func (e *env) assertScaledOnly(t *testing.T, before fleetState, scaled map[string]int32) fleetState {
	t.Helper()
	e.waitFleetAvailable(t)
	after := e.snapshot(t)
	require.Len(t, after, len(before), "no App is lost")
	for name, was := range before {
		replicas, ok := scaled[name]
		if !ok {
			require.Equal(t, was, after[name], "App %s", name)
			continue
		}
		for _, pod := range strings.Split(strings.SplitN(was, "pods=", 2)[1], ",") {
			require.Contains(t, after[name], pod, "App %s keeps its pods", name)
		}
		app := e.fleetApp(t, name)
		require.Equal(t, replicas, *app.Spec.Replicas, "App %s", name)
		require.Equal(t, replicas, app.Status.AvailableReplicas, "App %s", name)
	}
	return after
}

// assertPlannedOnly checks that OLM planned, for the Subscription made last, the releases on
// the path and none of the others.
func (e *env) assertPlannedOnly(t *testing.T, versions, path []string) {
	t.Helper()
	ctx := context.Background()
	sub, err := e.CurrentSubscription(ctx)
	require.NoError(t, err)
	plans, err := e.InstallPlansOf(ctx, sub)
	require.NoError(t, err)
	var planned []string
	for _, p := range plans {
		planned = append(planned, p.Spec.ClusterServiceVersionNames...)
	}
	for _, v := range versions[1:] {
		require.Equal(t, slices.Contains(path, v), slices.Contains(planned, csvName(v)), "OLM plans %s only if it is on the path %v: planned %v", v, path, planned)
	}
}
