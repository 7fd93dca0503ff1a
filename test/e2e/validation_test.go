package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func TestAnInvalidAppIsRefusedNamingTheField(t *testing.T) {
	ns := namespace(t)
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"},
		Spec:       appv1.AppSpec{Image: "nginx::latest", Ports: []appv1.AppPort{{Name: "web", ContainerPort: 8080}, {Name: "alt", ContainerPort: 8080}}},
	}
	err := cluster.Client.Create(context.Background(), app)
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), "spec.image")
	require.Contains(t, err.Error(), "spec.ports[1].containerPort")
	require.True(t, apierrors.IsNotFound(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(app), &appv1.App{})))

	// Through kubectl, as a user meets it: a name no Service can have.
	manifest := "apiVersion: mycompany.com/v1\nkind: App\nmetadata:\n  name: web.v2\nspec:\n  image: nginx\n"
	out, err := kubectlStdin(t, manifest, "create", "-n", ns, "-f", "-")
	require.Error(t, err)
	require.True(t, strings.Contains(out, "metadata.name"), out)
}
