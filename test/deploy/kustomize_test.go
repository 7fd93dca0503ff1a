package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestMakeDeployRunsAppOperatorWithKustomize deploys config/default with make deploy, as a
// user without OLM does, with a certificate of the user's own (make certificates, then
// CERT_DIR: cert-manager's controllers are not built here), runs the sample App on the real
// node, and removes everything with make undeploy, the tree left as it was.
func TestMakeDeployRunsAppOperatorWithKustomize(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	before := gitStatus(t)
	certs := "CERT_DIR=" + t.TempDir()
	run(t, c, "certificates", certs)

	start := time.Now()
	run(t, c, "deploy", certs)
	manager := client.ObjectKey{Namespace: "app-operator-system", Name: "app-operator-controller-manager"}
	require.NoError(t, c.Poll(ctx, 5*time.Minute, "the manager's Deployment to be available", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Client.Get(ctx, manager, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
			d.Status.AvailableReplicas == *d.Spec.Replicas, nil
	}))
	t.Logf("make deploy: the manager available in %.1fs", time.Since(start).Seconds())
	app := runSample(t, c, "web")
	scale(t, c, app, 3)

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
