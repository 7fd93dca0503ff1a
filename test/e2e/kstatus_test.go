package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

var appsResource = schema.GroupVersionResource{Group: appv1.GroupVersion.Group, Version: "v1", Resource: "apps"}

// kstatusSeen is what kstatus, as GitOps tools run it, read from each version of an App.
type kstatusSeen struct {
	status             status.Status
	generation         int64
	observedGeneration int64
}

// watchKStatus creates app and reads every version of it the API server sends, by kstatus,
// until until returns true for one of them or the timeout passes. It returns what it read, in
// order, the creation first.
func watchKStatus(t *testing.T, app *appv1.App, timeout time.Duration, until func(kstatusSeen) bool) []kstatusSeen {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dc, err := dynamic.NewForConfig(cluster.Config)
	require.NoError(t, err)
	w, err := dc.Resource(appsResource).Namespace(app.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + app.Name})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, cluster.Client.Create(ctx, app))

	var seen []kstatusSeen
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("App %s/%s: gave up after %v; kstatus read %v", app.Namespace, app.Name, timeout, seen)
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "the watch ended")
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			u := ev.Object.(*unstructured.Unstructured)
			res, err := status.Compute(u)
			require.NoError(t, err)
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			s := kstatusSeen{status: res.Status, generation: u.GetGeneration(), observedGeneration: observed}
			seen = append(seen, s)
			if until(s) {
				return seen
			}
		}
	}
}

// The App's first status write, by the first reconcile of its generation, already carries its
// observedGeneration and reads InProgress; it reads Current once its pods are available, and
// never before.
func TestANewAppReadsInProgressThenCurrent(t *testing.T) {
	app := sample(t, namespace(t))
	seen := watchKStatus(t, app, 2*time.Minute, func(s kstatusSeen) bool { return s.status == status.CurrentStatus && s.observedGeneration > 0 })
	require.GreaterOrEqual(t, len(seen), 3, "created, in progress, current: %v", seen)
	require.Zero(t, seen[0].observedGeneration, "as created, with no status yet")
	first := seen[1]
	require.Equal(t, first.generation, first.observedGeneration, "the first status write observes the generation: %v", seen)
	require.Equal(t, status.InProgressStatus, first.status, "pods are not available yet: %v", seen)
	for _, s := range seen[1 : len(seen)-1] {
		require.Equal(t, status.InProgressStatus, s.status, "nothing reads Current or Failed before the pods are available: %v", seen)
	}
}

// An App whose pods never become ready reads InProgress, then Failed once its rollout's progress
// deadline has passed.
func TestAnAppThatNeverBecomesReadyReadsFailed(t *testing.T) {
	t.Parallel() // it waits for a deadline; the other waiting tests wait alongside
	app := sample(t, namespace(t))
	app.Spec.Replicas = ptr.To(int32(1))
	app.Spec.Args = []string{"--never-ready"}
	const deadline = 15 * time.Second
	app.Spec.Rollout = &appv1.RolloutSpec{ProgressDeadlineSeconds: ptr.To(int32(deadline.Seconds()))}
	seen := watchKStatus(t, app, 2*time.Minute, func(s kstatusSeen) bool { return s.status == status.FailedStatus })
	require.Equal(t, status.InProgressStatus, seen[1].status, "first in progress: %v", seen)
	for _, s := range seen[1 : len(seen)-1] {
		require.Equal(t, status.InProgressStatus, s.status, "in progress until it fails: %v", seen)
	}
}
