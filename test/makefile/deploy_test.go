package makefile_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestMakeDeployRunsTheImageItIsGivenAndLeavesTheTreeClean renders what make deploy applies,
// for the committed image and for one a developer names, and wants every container of the
// manager's Deployment to run it, with config/ unchanged after.
func TestMakeDeployRunsTheImageItIsGivenAndLeavesTheTreeClean(t *testing.T) {
	root := localcluster.RepoRoot()
	before := gitStatus(t, root)

	releases, err := release.Load(root + "/catalog")
	require.NoError(t, err)
	committed := "quay.io/mycompany/app-operator:v" + releases.Latest().Version
	require.Equal(t, []string{committed, committed}, managerImages(t, root), "the committed configuration deploys the release being prepared")
	mine := "registry.example.com/me/app-operator:dev"
	require.Equal(t, []string{mine, mine}, managerImages(t, root, "IMG="+mine))

	require.Equal(t, before, gitStatus(t, root), "make deploy leaves the tree as it was")
}

// TestMakeDeployWithACertDirNeedsNoCertManager renders make deploy's manifests for a
// certificate of the user's own (CERT_DIR, as make certificates writes it): no cert-manager
// object or annotation is left, every Secret the manager mounts is there, and every webhook
// and the CRD's conversion trust the folder's CA.
func TestMakeDeployWithACertDirNeedsNoCertManager(t *testing.T) {
	root := localcluster.RepoRoot()
	dir := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "-s", "certificates", "CERT_DIR="+dir)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)

	objs := deployManifests(t, root, "CERT_DIR="+dir)
	secrets := map[string]bool{}
	var mounted, caBundles []string
	for _, u := range objs {
		assert.NotContains(t, u.GetAPIVersion(), "cert-manager.io", "%s %s", u.GetKind(), u.GetName())
		assert.NotContains(t, u.GetAnnotations(), "cert-manager.io/inject-ca-from", "%s %s", u.GetKind(), u.GetName())
		switch u.GetKind() {
		case "Secret":
			secrets[u.GetName()] = true
		case "Deployment":
			var d appsv1.Deployment
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d))
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					mounted = append(mounted, v.Secret.SecretName)
				}
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
			for _, h := range hooks {
				b, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
				caBundles = append(caBundles, b)
			}
		}
	}
	require.Len(t, mounted, 2, "the webhooks' and the metrics' certificates")
	for _, name := range mounted {
		assert.True(t, secrets[name], "the manager mounts Secret %s, which make deploy applies", name)
	}
	require.Len(t, caBundles, 3, "three webhooks")
	for _, b := range caBundles {
		assert.Equal(t, base64.StdEncoding.EncodeToString(ca), b)
	}
}

// managerImages renders make deploy's manifests and returns the images of the manager's
// containers.
func managerImages(t *testing.T, root string, vars ...string) []string {
	t.Helper()
	var images []string
	for _, u := range deployManifests(t, root, vars...) {
		if u.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d))
		for _, c := range d.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
	}
	return images
}

// deployManifests renders what make deploy applies.
func deployManifests(t *testing.T, root string, vars ...string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-s", "-o", "manifests", "deploy-manifests"}, vars...)...)
	cmd.Dir = root
	objs, err := localcluster.Render(cmd)
	require.NoError(t, err)
	return objs
}

func gitStatus(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--", "config")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}
