package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

// neverReadyImage is a broken release of the sample workload: the same program, started never
// to answer its readiness probe.
const neverReadyImage = "quay.io/mycompany/app-operator-sample:v1.0.1-never-ready"

var pushNeverReady sync.Once

// rollingApp is the sample App on the real node, rolled out one pod at a time and never below
// its replica count, with a short progress deadline; it returns once the App is Available.
func rollingApp(t *testing.T, autoRollback *bool) *appv1.App {
	t.Helper()
	pushNeverReady.Do(func() {
		require.NoError(t, cluster.PushWithArgs(context.Background(), sampleImage, neverReadyImage, []string{"--never-ready"}))
	})
	app := sample(t, namespace(t))
	app.Spec.Rollout = &appv1.RolloutSpec{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
		ProgressDeadlineSeconds: ptr.To(int32(20)), AutoRollback: autoRollback}
	require.NoError(t, cluster.Client.Create(context.Background(), app))
	AssertAppAvailable(t, client.ObjectKeyFromObject(app), *app.Spec.Replicas)
	return app
}

// deploymentHistory records every version of an App's Deployment the API server sends.
type deploymentHistory struct {
	mu       sync.Mutex
	versions []appsv1.Deployment
}

func watchDeployment(t *testing.T, app *appv1.App) *deploymentHistory {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := cluster.Clientset.AppsV1().Deployments(app.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + app.Name})
	require.NoError(t, err)
	h := &deploymentHistory{}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type != watch.Deleted {
				h.mu.Lock()
				h.versions = append(h.versions, *d)
				h.mu.Unlock()
			}
		}
	}()
	return h
}

// images is the sequence of images the Deployment's template held, each change once.
func (h *deploymentHistory) images() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, d := range h.versions {
		img := d.Spec.Template.Spec.Containers[0].Image
		if len(out) == 0 || out[len(out)-1] != img {
			out = append(out, img)
		}
	}
	return out
}

// fewestAvailable is the least number of available pods any version reported.
func (h *deploymentHistory) fewestAvailable() int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	fewest := int32(-1)
	for _, d := range h.versions {
		if fewest < 0 || d.Status.AvailableReplicas < fewest {
			fewest = d.Status.AvailableReplicas
		}
	}
	return fewest
}

func rollOut(t *testing.T, app *appv1.App, image string) {
	t.Helper()
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(app), app))
	app.Spec.Image = image
	require.NoError(t, cluster.Client.Update(context.Background(), app))
}

// assertRolledBack waits until the App reports the rollback of neverReadyImage, with every pod
// back on the sample image and available, and checks what the rollback did on the way.
func assertRolledBack(t *testing.T, app *appv1.App, history *deploymentHistory) {
	t.Helper()
	key := client.ObjectKeyFromObject(app)
	eventually(t, 3*time.Minute, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.Get(context.Background(), key, app))
		require.NotNil(c, app.Status.Rollout)
		require.NotNil(c, app.Status.Rollout.RolledBack, "rolledBack")
		require.True(c, meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable), "Available: %+v", app.Status.Conditions)
		progressing := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionProgressing)
		require.Equal(c, metav1.ConditionFalse, progressing.Status, "every pod runs the restored template: %+v", progressing)
		require.Equal(c, appv1.ReasonRolledBack, progressing.Reason)
	}, "App "+key.String()+" to be rolled back")
	require.Equal(t, neverReadyImage, app.Status.Rollout.RolledBack.Image)
	require.Equal(t, sampleImage, app.Status.Image, "the image every pod runs")
	degraded := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
	require.Equal(t, appv1.ReasonRolledBack, degraded.Reason)
	require.Contains(t, degraded.Message, neverReadyImage)

	pods := &corev1.PodList{}
	require.NoError(t, cluster.Client.List(context.Background(), pods, client.InNamespace(key.Namespace), client.MatchingLabels(desired.SelectorLabels(app))))
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			require.Equal(t, sampleImage, p.Spec.Containers[0].Image, "pod %s", p.Name)
		}
	}
	require.Equal(t, []string{sampleImage, neverReadyImage, sampleImage}, history.images(), "the broken template was applied once, then the good one again")
	require.GreaterOrEqual(t, history.fewestAvailable(), *app.Spec.Replicas, "with maxUnavailable 0, no pod of the App was ever unavailable")
	require.Equal(t, 1, rollbackEvents(t, app), "one rollback, one Event")
}

func rollbackEvents(t *testing.T, app *appv1.App) int {
	events := &eventsv1.EventList{}
	require.NoError(t, cluster.Client.List(context.Background(), events, client.InNamespace(app.Namespace)))
	n := 0
	for _, e := range events.Items {
		if e.Regarding.Name == app.Name && e.Reason == appv1.ReasonRolledBack {
			n++
		}
	}
	return n
}

// A rollout to an image that never becomes ready is rolled back to the previous image once its
// progress deadline passes; the old pods serve throughout.
func TestAFailedRolloutIsRolledBackByItself(t *testing.T) {
	t.Parallel() // it waits for a deadline; the other waiting tests wait alongside
	app := rollingApp(t, nil)
	history := watchDeployment(t, app)
	rollOut(t, app, neverReadyImage)
	assertRolledBack(t, app, history)

	// The failed template is not tried again while the App asks for it.
	time.Sleep(25 * time.Second) // longer than the progress deadline
	require.Equal(t, []string{sampleImage, neverReadyImage, sampleImage}, history.images())
}

// A restart of every manager in the middle of a failed rollout still rolls it back, once: the
// decision lives in the App's status, and the template to restore in the Deployment's
// ReplicaSets.
func TestAFailedRolloutIsRolledBackOnceAcrossAManagerRestart(t *testing.T) {
	ctx := context.Background()
	app := rollingApp(t, nil)
	history := watchDeployment(t, app)
	rollOut(t, app, neverReadyImage)
	eventually(t, time.Minute, func(c *assert.CollectT) {
		require.Contains(c, history.images(), neverReadyImage)
	}, "the broken template to reach the Deployment")

	managers, _, err := cluster.Managers(ctx)
	require.NoError(t, err)
	restarts := map[string]int32{}
	for _, m := range managers {
		restarts[m.Pod.Name] = restartCount(t, m.Pod.Name)
		require.NoError(t, cluster.Crash(ctx, m.Pod, "manager"))
	}
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		for name, before := range restarts {
			require.Greater(c, restartCount(t, name), before, "manager %s restarted", name)
		}
	}, "the kubelet to restart every manager")
	assertRolledBack(t, app, history)
	waitForTwoManagers(t)
}

// With spec.rollout.autoRollback false, a failed rollout stays as it is for a person to act on:
// the App is Degraded, and nothing is reverted.
func TestAutoRollbackFalseLeavesAFailedRolloutAsItIs(t *testing.T) {
	t.Parallel()
	app := rollingApp(t, ptr.To(false))
	history := watchDeployment(t, app)
	rollOut(t, app, neverReadyImage)
	key := client.ObjectKeyFromObject(app)
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.Get(context.Background(), key, app))
		degraded := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
		require.Equal(c, appv1.ReasonProgressDeadlineExceeded, degraded.Reason)
	}, "App "+key.String()+" to report its rollout stuck")
	time.Sleep(10 * time.Second) // room for a rollback that must not come
	require.NoError(t, cluster.Client.Get(context.Background(), key, app))
	require.Nil(t, app.Status.Rollout.RolledBack)
	require.Equal(t, []string{sampleImage, neverReadyImage}, history.images())
	require.Zero(t, rollbackEvents(t, app))
	require.Equal(t, *app.Spec.Replicas, app.Status.AvailableReplicas, "the old pods still serve")
}
