package controllers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mycompany/app-operator/controllers"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/cachesync"
	"github.com/mycompany/app-operator/internal/envtest"
	"github.com/mycompany/app-operator/internal/operator"
)

// A reconcile that runs after the App's children were created, but before their watch events
// reached the cache, must neither write them again nor report them created again.
func TestAReconcileBeforeTheCacheShowsNewChildrenWritesNothing(t *testing.T) {
	ctx := context.Background()
	app := newApp("shop", "web")
	app.UID = "web-uid"
	writes := 0
	funcs := envtest.CountingWrites(func() { writes++ })
	funcs.Get = func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		switch obj.(type) {
		case *appsv1.Deployment, *corev1.Service:
			return apierrors.NewNotFound(schema.GroupResource{}, key.Name) // the cache lags
		}
		return cl.Get(ctx, key, obj, opts...)
	}
	c := fake.NewClientBuilder().WithScheme(operator.Scheme()).WithObjects(app).WithStatusSubresource(app).
		WithInterceptorFuncs(funcs).Build()
	recorder := events.NewFakeRecorder(10)
	tracker := &cachesync.Tracker{}
	r := &controllers.AppReconciler{Client: c, Applier: &apply.Applier{Client: c, Writes: tracker}, Recorder: recorder, Writes: tracker}
	req := ctrl.Request{NamespacedName: key(app)}

	_, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 3, writes, "the Deployment, the Service and the status")
	require.Len(t, recorder.Events, 1)
	require.Contains(t, <-recorder.Events, "Created Deployment web; Created Service web")

	result, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 3, writes, "nothing written again")
	require.Empty(t, recorder.Events, "nothing reported created again")
	require.Equal(t, cachesync.MaxWait, result.RequeueAfter, "the children's watch events bring the App back; MaxWait is the fallback")
}
