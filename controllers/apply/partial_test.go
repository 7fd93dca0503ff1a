package apply

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mycompany/app-operator/controllers/cachesync"
)

// partialCache keeps children as the operator's cache does, without their spec: identity,
// owner and the hashes, the owned fields' hash set by the test. It counts the reads that go
// past it to the API server.
type partialCache struct {
	client.WithWatch
	ownedHash string
	reads     int
}

func newPartialCache(t *testing.T) (*partialCache, *laggingCache) {
	api := newLaggingCache(t)
	api.caughtUp = true
	c := &partialCache{}
	c.WithWatch = interceptor.NewClient(api, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := cl.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			slim := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
				Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
				ResourceVersion: obj.GetResourceVersion(), OwnerReferences: obj.GetOwnerReferences(),
				Annotations: map[string]string{HashAnnotation: obj.GetAnnotations()[HashAnnotation], OwnedHashAnnotation: c.ownedHash},
			}}
			slim.DeepCopyInto(obj.(*corev1.Service))
			return nil
		},
	})
	return c, api
}

func TestAChildKeptWithoutItsSpecIsReadWholeOnlyWhenItsHashesDiffer(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	cache, api := newPartialCache(t)
	reader := interceptor.NewClient(api.api, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			cache.reads++
			return cl.Get(ctx, key, obj, opts...)
		},
	})
	a := &Applier{Client: cache, Reader: reader, Writes: &cachesync.Tracker{}}
	_, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)
	applied := &corev1.Service{}
	require.NoError(t, api.api.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, applied))
	hash := applied.Annotations[HashAnnotation]
	cache.reads, api.applies = 0, 0

	cache.ownedHash = hash
	current, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Unchanged, result, "the hashes agree: the child is as applied")
	require.Equal(t, 0, cache.reads, "judged from the cache alone")
	require.Empty(t, current.(*corev1.Service).Spec.Ports, "the cache's copy is returned")

	cache.ownedHash = "changed"
	_, result, err = a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Unchanged, result, "the whole child still holds what the operator wants")
	require.Equal(t, 1, cache.reads, "read whole, once")
	require.Equal(t, 0, api.applies)

	applied.Spec.Ports[0].Port = 9999
	require.NoError(t, api.api.Update(ctx, applied))
	_, result, err = a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Reverted, result, "someone's change, found in the whole child, is reverted")
	require.Equal(t, 2, cache.reads)
	require.Equal(t, 1, api.applies)

	cache.ownedHash = hash
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Updated, result, "a new configuration is applied without reading the child whole")
	require.Equal(t, 2, cache.reads)
	require.Equal(t, 2, api.applies)
}
