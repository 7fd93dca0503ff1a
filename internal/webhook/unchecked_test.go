package webhook_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// An App stored while no webhook served its namespace, invalid and without defaults, can be
// labelled and deleted in the foreground once the webhooks serve it: an update that leaves
// its spec as it was, defaults aside, is not checked again, as the garbage collector's removal
// of its finalizer must pass. A change of its spec is checked, and refused while the App stays
// invalid.
func TestAnAppStoredUncheckedCanBeLabelledAndDeletedInTheForeground(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	restore := env.WithoutWebhooks(t, ns)
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Finalizers: []string{"example.com/hold"}},
		Spec:       appv1.AppSpec{Image: "not a reference"},
	}
	require.NoError(t, env.Client.Create(ctx, app))
	restore()
	key := client.ObjectKeyFromObject(app)

	env.Update(t, app, func() { app.Labels = map[string]string{"team": "web"} })

	err := env.TryUpdate(app, func() { app.Spec.Replicas = ptr.To(int32(3)) })
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), `spec.image: Invalid value: "not a reference"`)

	require.NoError(t, env.Client.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	// There is no garbage collector here: remove its finalizer, and the test's, as it would.
	env.Update(t, app, func() {
		require.Contains(t, app.Finalizers, metav1.FinalizerDeleteDependents)
		app.Finalizers = nil
	})
	err = env.Client.Get(ctx, key, &appv1.App{})
	require.True(t, apierrors.IsNotFound(err), "the App is gone: %v", err)
}
