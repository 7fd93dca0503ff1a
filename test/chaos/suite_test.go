// Package chaos proves App Operator survives faults on a real control plane with the real
// OLM (make test-chaos): crashes of the manager, a restart of kube-apiserver, the loss of the
// leader, and conflicting writers. Each case prints its figures.
package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

var root = localcluster.RepoRoot()

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "chaos", nil)) }

// figures prints what a case measured, for make test-chaos to show.
func figures(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("CHAOS %s: "+format, append([]any{t.Name()}, args...)...)
	t.Log(line)
	fmt.Println(line)
}

// newCluster starts a cluster with OLM, installs the release being prepared from its catalog
// image and waits until its manager runs, with managerArgs added to the bundle's arguments
// (kept on failure).
func newCluster(t *testing.T, managerArgs ...string) *localcluster.Cluster {
	t.Helper()
	ctx := context.Background()
	rel, err := localcluster.BuildReleases(ctx, root)
	require.NoError(t, err)
	c := localcluster.StartForTest(t, "chaos")
	head := rel.Head()
	require.NoError(t, c.PublishCatalog(ctx, rel, head.Version))
	require.NoError(t, c.Subscribe(ctx, localcluster.Subscription{}))
	_, err = c.WaitForCSV(ctx, head.CSVName(), 5*time.Minute)
	require.NoError(t, err)
	if len(managerArgs) > 0 {
		args, err := c.ManagerArgs(ctx, head.CSVName())
		require.NoError(t, err)
		require.NoError(t, c.SetManagerArgs(ctx, head.CSVName(), append(args, managerArgs...)))
	}
	_, err = c.WaitForManager(ctx, head.CSVName(), 3*time.Minute)
	require.NoError(t, err)
	require.NoError(t, c.WaitForCRD(ctx))
	return c
}

// headCSV is the release the chaos suite installs.
func headCSV(t *testing.T) string {
	t.Helper()
	rel, err := localcluster.BuildReleases(context.Background(), root)
	require.NoError(t, err)
	return rel.Head().CSVName()
}

func newApp(ns string, i int) *appv1.App {
	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%04d", i)},
		Spec: appv1.AppSpec{Image: "registry.example.com/chaos/web:1.27", Replicas: ptr.To(int32(1))}}
	localcluster.OnFakeNodes(&app.Spec)
	return app
}

// createApps creates Apps from..to-1 in a namespace, as a user's client would: a creation
// refused while the operator's webhooks or the API server are down is tried again, and one
// whose answer was lost (it may have succeeded) is not an error. It returns how many
// attempts failed and were retried.
func createApps(t *testing.T, c *localcluster.Cluster, ns string, from, to int) int {
	t.Helper()
	retried := 0
	for i := from; i < to; i++ {
		err := c.PollEvery(context.Background(), 500*time.Millisecond, 2*time.Minute, fmt.Sprintf("App %d to be created", i), func(ctx context.Context) (bool, error) {
			err := client.IgnoreAlreadyExists(c.Client.Create(ctx, newApp(ns, i)))
			if err != nil {
				retried++ // PollEvery tries again and reports the last error if it gives up
			}
			return err == nil, err
		})
		require.NoError(t, err)
	}
	return retried
}

func createNamespace(t *testing.T, c *localcluster.Cluster, name string) {
	t.Helper()
	require.NoError(t, c.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}

// waitConverged waits until n Apps of a namespace are Available and returns how long it took.
func waitConverged(t *testing.T, c *localcluster.Cluster, ns string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, c.Poll(context.Background(), timeout, fmt.Sprintf("%d Apps in %s to be Available", n, ns), func(ctx context.Context) (bool, error) {
		apps := &appv1.AppList{}
		if err := c.Client.List(ctx, apps, client.InNamespace(ns)); err != nil {
			return false, err
		}
		ready := 0
		for _, a := range apps.Items {
			if a.Status.ObservedGeneration == a.Generation && meta.IsStatusConditionTrue(a.Status.Conditions, appv1.ConditionAvailable) &&
				a.Status.AvailableReplicas == *a.Spec.Replicas {
				ready++
			}
		}
		return ready == n && len(apps.Items) == n, nil
	}))
	return time.Since(start)
}

// assertExactlyOneWorkloadEach checks that each App of a namespace has exactly one Deployment
// and one Service, controlled by it, and that no managed Deployment or Service is orphaned.
func assertExactlyOneWorkloadEach(t *testing.T, c *localcluster.Cluster, ns string, n int) {
	t.Helper()
	ctx := context.Background()
	apps := &appv1.AppList{}
	require.NoError(t, c.Client.List(ctx, apps, client.InNamespace(ns)))
	require.Len(t, apps.Items, n, "no App is lost")
	uids := map[string]string{}
	for _, a := range apps.Items {
		uids[string(a.UID)] = a.Name
	}
	managed := client.MatchingLabels{appv1.LabelManagedBy: appv1.ManagedByValue}
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}} {
		require.NoError(t, c.Client.List(ctx, list, client.InNamespace(ns), managed))
		objs, err := meta.ExtractList(list)
		require.NoError(t, err)
		per := map[string]int{}
		for _, o := range objs {
			obj := o.(client.Object)
			ref := metav1.GetControllerOf(obj)
			require.NotNil(t, ref, "%T %s has no controller: orphaned", obj, obj.GetName())
			owner, ok := uids[string(ref.UID)]
			require.True(t, ok, "%T %s belongs to no App: orphaned", obj, obj.GetName())
			per[owner]++
		}
		require.Len(t, per, n, "%T: every App has one", list)
		for owner, count := range per {
			require.Equal(t, 1, count, "%T of App %s", list, owner)
		}
	}
}

// unrecoverable returns the log lines of the managers that no retry recovers from: panics,
// fatal errors, and a manager that stopped on its own. It reads every manager container's log,
// the running and the previous instance.
func unrecoverable(t *testing.T, c *localcluster.Cluster) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(c.Dir, "pod-logs", localcluster.OperatorsNamespace+"_"+localcluster.DeploymentName+"-*", "manager", "*.log"))
	require.NoError(t, err)
	var bad []string
	for _, f := range logs {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, `"level":"panic"`) || strings.Contains(line, `"level":"fatal"`) ||
				strings.Contains(line, " panic: ") || strings.Contains(line, `"msg":"manager stopped"`) {
				bad = append(bad, line)
			}
		}
	}
	return bad
}
