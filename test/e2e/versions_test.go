package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// A user who still applies a v1alpha1 manifest is told that the version does not exist, by
// name, and nothing is created; the same App through v1 is admitted.
func TestAV1alpha1ManifestIsRefusedNamingTheVersion(t *testing.T) {
	ns := namespace(t)
	manifest := func(version string) string {
		return "apiVersion: mycompany.com/" + version + "\nkind: App\nmetadata:\n  name: legacy\nspec:\n  image: " + sampleImage + "\n  replicas: 1\n"
	}
	out, err := kubectlStdin(t, manifest("v1alpha1"), "apply", "-n", ns, "-f", "-")
	require.Error(t, err)
	require.Contains(t, out, `no matches for kind "App" in version "mycompany.com/v1alpha1"`)

	key := client.ObjectKey{Namespace: ns, Name: "legacy"}
	require.True(t, apierrors.IsNotFound(cluster.Client.Get(context.Background(), key, &appv1.App{})), "nothing was created")

	out, err = kubectlStdin(t, manifest("v1"), "apply", "-n", ns, "-f", "-")
	require.NoError(t, err, out)
	AssertAppAvailable(t, key, 1)
}
