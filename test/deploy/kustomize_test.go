package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestMakeDeployRunsAppOperatorWithKustomize deploys config/default with make deploy, as a
// user without OLM does, with a certificate of the user's own (make certificates, then
// CERT_DIR: cert-manager's controllers are not built here), and runs the sample App on the real
// node. make deploy again with WATCH_NAMESPACES narrows the install to the sample's namespace,
// leaving an App elsewhere alone, and once more without it widens it again, so that App is
// served as written. make undeploy removes everything, the tree left as it was.
func TestMakeDeployRunsAppOperatorWithKustomize(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	before := gitStatus(t)
	certs := "CERT_DIR=" + t.TempDir()
	run(t, c, "certificates", certs)

	deploy(t, c, certs)
	app := runSample(t, c, "web")

	// Narrowed to the sample's namespace, the install serves the sample through the webhooks,
	// leaves an App elsewhere alone, and its manager may not read Apps or their workloads there.
	deploy(t, c, certs, "WATCH_NAMESPACES="+app.Namespace)
	scale(t, c, app, 3)
	require.NoError(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: elsewhere}}))
	alone, err := c.CheckLeftAlone(ctx, elsewhere, 15*time.Second)
	require.NoError(t, err)
	requireAccess(t, c, "app-operator-system", map[string]bool{app.Namespace: true, elsewhere: false})

	// Widened again: the App left alone is served as written, and the one with a bad image,
	// which no webhook checked, stalls naming the field. No binding of the narrow install is
	// left.
	deploy(t, c, certs)
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(alone), 2*time.Minute))
	bad := client.ObjectKey{Namespace: elsewhere, Name: localcluster.ScopeBadAppName}
	require.NoError(t, c.Poll(ctx, time.Minute, "the App with a bad image to stall, naming the field", func(ctx context.Context) (bool, error) {
		app := &appv1.App{}
		if err := c.Client.Get(ctx, bad, app); err != nil {
			return false, err
		}
		stalled := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionStalled)
		return stalled != nil && stalled.Status == metav1.ConditionTrue && strings.Contains(stalled.Message, "spec.image: Invalid value"), nil
	}))
	err = c.Client.Get(ctx, bad, &appsv1.Deployment{})
	require.True(t, apierrors.IsNotFound(err), "nothing of the invalid App is applied: %v", err)
	requireAccess(t, c, "app-operator-system", map[string]bool{app.Namespace: true, elsewhere: true})
	bindings := &rbacv1.RoleBindingList{}
	require.NoError(t, c.Client.List(ctx, bindings, client.MatchingLabels{"app.kubernetes.io/component": "watched-namespace"}))
	require.Empty(t, bindings.Items, "the narrow install's RoleBindings are gone")

	// make undeploy removes the CRD too, and with it every App and its workload.
	run(t, c, "undeploy", certs)
	for _, gone := range []struct {
		obj client.Object
		key client.ObjectKey
	}{
		{&apiextensionsv1.CustomResourceDefinition{}, client.ObjectKey{Name: "apps.mycompany.com"}},
		{&corev1.Namespace{}, client.ObjectKey{Name: "app-operator-system"}},
		{&appsv1.Deployment{}, client.ObjectKeyFromObject(app)},
	} {
		what := fmt.Sprintf("%T %s to be gone", gone.obj, gone.key)
		require.NoError(t, c.Poll(ctx, 3*time.Minute, what, func(ctx context.Context) (bool, error) {
			err := c.Client.Get(ctx, gone.key, gone.obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}))
	}
	assert.Equal(t, before, gitStatus(t), "make deploy and make undeploy leave the tree as it was")
}

// deploy runs make deploy and waits until the manager's Deployment has rolled out what it
// applied.
func deploy(t *testing.T, c *localcluster.Cluster, vars ...string) {
	t.Helper()
	start := time.Now()
	run(t, c, "deploy", vars...)
	manager := client.ObjectKey{Namespace: "app-operator-system", Name: "app-operator-controller-manager"}
	require.NoError(t, c.WaitForDeployment(context.Background(), manager, 5*time.Minute))
	t.Logf("make deploy %s: the manager available in %.1fs", strings.Join(vars, " "), time.Since(start).Seconds())
}

// requireAccess checks, for each namespace, whether the manager installed in managerNamespace
// may read Apps and Deployments there.
func requireAccess(t *testing.T, c *localcluster.Cluster, managerNamespace string, want map[string]bool) {
	t.Helper()
	for ns, w := range want {
		may, err := c.MayAccess(context.Background(), managerNamespace, "app-operator-controller-manager", ns)
		require.NoError(t, err)
		require.Equal(t, w, may, "the manager may read Apps and Deployments in %s", ns)
	}
}

// run runs a make target against the cluster.
func run(t *testing.T, c *localcluster.Cluster, target string, vars ...string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", target}, vars...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make %s: %s", target, out)
}

func gitStatus(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}
