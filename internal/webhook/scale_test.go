package webhook_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// scaleTo changes an App's replica count through its scale subresource, as kubectl scale does.
// The operator's status writes change the App's resourceVersion meanwhile, so a conflict is
// retried on a fresh read, as kubectl retries it.
func scaleTo(ctx context.Context, app client.Object, replicas int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale := &autoscalingv1.Scale{}
		if err := env.Client.SubResource("scale").Get(ctx, app, scale); err != nil {
			return err
		}
		scale.Spec.Replicas = replicas
		return env.Client.SubResource("scale").Update(ctx, app, client.WithSubResourceBody(scale))
	})
}

func TestScalingAnAutoscaledAppIsRefusedNamingTheFields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	autoscaled := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "autoscaled"},
		Spec: appv1.AppSpec{Image: "nginx:1.27", Autoscaling: &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 5}}}
	require.NoError(t, env.Client.Create(ctx, autoscaled))
	err := scaleTo(ctx, autoscaled, 4)
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), "spec.replicas: Forbidden")
	require.Contains(t, err.Error(), "spec.autoscaling.minReplicas or spec.autoscaling.maxReplicas")

	// Nothing changed.
	stored := &appv1.App{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(autoscaled), stored))
	require.Equal(t, autoscaled.Spec.Replicas, stored.Spec.Replicas)

	// The same count is no change, and an App without autoscaling scales.
	require.NoError(t, scaleTo(ctx, autoscaled, *stored.Spec.Replicas))
	plain := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Spec: appv1.AppSpec{Image: "nginx:1.27"}}
	require.NoError(t, env.Client.Create(ctx, plain))
	require.NoError(t, scaleTo(ctx, plain, 4))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(plain), stored))
	require.Equal(t, ptr.To(int32(4)), stored.Spec.Replicas)
}
