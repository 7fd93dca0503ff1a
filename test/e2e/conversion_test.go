package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/api/v1alpha1"
)

func TestAV1alpha1AppIsServedAsV1(t *testing.T) {
	ctx := context.Background()
	old := &v1alpha1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace(t), Name: "legacy"},
		Spec:       v1alpha1.AppSpec{Image: sampleImage, Replicas: ptr.To(int32(2))},
	}
	require.NoError(t, cluster.Client.Create(ctx, old))

	// Read through OLM's conversion webhook Service, which reaches the manager.
	app := &appv1.App{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKeyFromObject(old), app))
	require.Equal(t, sampleImage, app.Spec.Image)
	require.Equal(t, int32(2), *app.Spec.Replicas)
	require.Equal(t, "http", app.Spec.Service.TargetPort, "v1 defaults apply to a v1alpha1 App")

	AssertAppAvailable(t, client.ObjectKeyFromObject(old), 2)
	back := &v1alpha1.App{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKeyFromObject(old), back))
	require.Equal(t, int32(2), back.Status.AvailableReplicas, "status converts back to v1alpha1")
}
