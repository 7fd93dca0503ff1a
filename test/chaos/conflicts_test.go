package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// TestConflictingWritersLoseNothing has one writer change an App while another changes its
// Deployment behind the operator's back, both with optimistic concurrency, for 20 seconds.
// Writes that conflict are retried; at the end the Deployment holds the App's last change and
// none of the other writer's drift.
func TestConflictingWritersLoseNothing(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	createNamespace(t, c, "conflicts")
	app := newApp("conflicts", 1)
	require.NoError(t, c.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)
	require.NoError(t, c.WaitForAppAvailable(ctx, key, time.Minute))

	var conflicts atomic.Int64
	var last atomic.Int64
	update := func(obj client.Object, change func()) {
		for {
			if err := c.Client.Get(ctx, key, obj); err != nil {
				t.Errorf("reading %T: %v", obj, err)
				return
			}
			change()
			err := c.Client.Update(ctx, obj)
			if !apierrors.IsConflict(err) {
				if err != nil {
					t.Errorf("writing %T: %v", obj, err)
				}
				return
			}
			conflicts.Add(1)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the App's owner
		defer wg.Done()
		for i := int64(1); time.Now().Before(deadline); i++ {
			a := &appv1.App{}
			update(a, func() { a.Spec.Env = []corev1.EnvVar{{Name: "GENERATION", Value: fmt.Sprint(i)}} })
			last.Store(i)
		}
	}()
	go func() { // someone editing the Deployment by hand
		defer wg.Done()
		for i := int32(2); time.Now().Before(deadline); i++ {
			d := &appsv1.Deployment{}
			update(d, func() { d.Spec.Replicas = ptr.To(i%5 + 2) })
		}
	}()
	wg.Wait()

	want := fmt.Sprint(last.Load())
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		d := &appsv1.Deployment{}
		require.NoError(ct, c.Client.Get(ctx, key, d))
		require.Equal(ct, int32(1), *d.Spec.Replicas, "the hand edits are reverted")
		env := d.Spec.Template.Spec.Containers[0].Env
		require.Len(ct, env, 1)
		require.Equal(ct, want, env[0].Value, "the App's last change is applied")
	}, time.Minute, 250*time.Millisecond)
	require.NoError(t, c.WaitForAppAvailable(ctx, key, time.Minute))
	require.Empty(t, unrecoverable(t, c))
	figures(t, "app_changes=%d writer_conflicts_retried=%d", last.Load(), conflicts.Load())
}
