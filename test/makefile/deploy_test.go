package makefile_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/bundle"
)

// TestMakeDeployRunsTheImageItIsGivenAndLeavesTheTreeClean renders what make deploy applies,
// for the committed image and for one a developer names, and wants every container of the
// manager's Deployment to run it, with config/ unchanged after.
func TestMakeDeployRunsTheImageItIsGivenAndLeavesTheTreeClean(t *testing.T) {
	root := repoRoot()
	before := gitStatus(t, root)

	releases, err := release.Load(root + "/catalog")
	require.NoError(t, err)
	committed := "quay.io/mycompany/app-operator:v" + releases.Latest().Version
	require.Equal(t, []string{committed, committed}, managerImages(t, root), "the committed configuration deploys the release being prepared")
	mine := "registry.example.com/me/app-operator:dev"
	require.Equal(t, []string{mine, mine}, managerImages(t, root, "IMG="+mine))

	require.Equal(t, before, gitStatus(t, root), "make deploy leaves the tree as it was")
}

// managerImages renders make deploy's manifests and returns the images of the manager's
// containers.
func managerImages(t *testing.T, root string, vars ...string) []string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-s", "-o", "manifests", "deploy-manifests"}, vars...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	objs, err := bundle.Decode(bytes.NewReader(out))
	require.NoError(t, err)
	var images []string
	for _, u := range objs {
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

func gitStatus(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--", "config")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}
