package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// namespace creates a namespace with a generated name for one test, deleted after it. It
// enforces the restricted Pod Security Standard, which App Operator's defaults meet.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	require.NoError(t, cluster.Client.Create(context.Background(), ns))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// kubectl runs the kubectl built here against the cluster and returns its output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectlStdin runs kubectl with input on its standard input.
func kubectlStdin(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func metaItems(list client.ObjectList) ([]runtime.Object, error) { return meta.ExtractList(list) }

// eventually retries check for up to timeout; on failure it reports what check last found.
func eventually(t *testing.T, timeout time.Duration, check func(c *assert.CollectT), msg string) {
	t.Helper()
	require.EventuallyWithT(t, check, timeout, 250*time.Millisecond, msg)
}

// AssertAppAvailable waits until the App is Available for its current generation, with
// every desired replica available, and returns it.
func AssertAppAvailable(t *testing.T, key client.ObjectKey, replicas int32) *appv1.App {
	t.Helper()
	app := &appv1.App{}
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.Get(context.Background(), key, app))
		require.Equal(c, app.Generation, app.Status.ObservedGeneration, "observedGeneration")
		require.True(c, meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable), "Available: %+v", app.Status.Conditions)
		require.Equal(c, replicas, app.Status.AvailableReplicas, "availableReplicas")
		require.True(c, meta.IsStatusConditionFalse(app.Status.Conditions, appv1.ConditionProgressing), "Progressing: %+v", app.Status.Conditions)
	}, "App "+key.String()+" to become Available")
	return app
}
