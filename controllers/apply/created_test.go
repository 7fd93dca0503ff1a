package apply

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mycompany/app-operator/controllers/cachesync"
)

// laggingCache is a client whose reads miss every object until caughtUp is set, as a cache
// does before a write's watch event reaches it; it counts the applies it sends. api reads
// the same objects without missing any, as the API server does.
type laggingCache struct {
	client.WithWatch
	api      client.WithWatch
	caughtUp bool
	applies  int
}

func newLaggingCache(t *testing.T) *laggingCache {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	c := &laggingCache{api: fake.NewClientBuilder().WithScheme(scheme).Build()}
	c.WithWatch = interceptor.NewClient(c.api, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if !c.caughtUp {
				return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			c.applies++
			return cl.Apply(ctx, obj, opts...)
		},
	})
	return c
}

func service(owner *corev1.ConfigMap, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
		}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}},
	}
}

func TestAChildJustWrittenIsNotAppliedAgainBeforeTheCacheShowsIt(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	c := newLaggingCache(t)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	a := &Applier{Client: c, Writes: &cachesync.Tracker{Clock: clock}}

	created, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)
	require.Equal(t, "web", created.GetName())
	require.Equal(t, 1, c.applies)

	again, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Awaiting, result, "the cache does not show the create yet")
	require.Nil(t, again)
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Awaiting, result, "a change waits for the cache too: the create's watch event brings the owner back")
	require.Equal(t, 1, c.applies, "no second write")

	c.caughtUp = true
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Updated, result, "once the cache shows the child, the change is applied")
	require.Equal(t, 2, c.applies)

	c.caughtUp = false
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Awaiting, result, "the update is awaited like the create")
	clock.SetTime(clock.Now().Add(cachesync.MaxWait))
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Created, result, "a write the cache never shows is awaited no longer than cachesync.MaxWait")
	require.Equal(t, 3, c.applies)
}

func TestAnObjectMissingFromTheCacheIsLookedForInTheAPIServer(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	c := newLaggingCache(t)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	a := &Applier{Client: c, Reader: c.api, Writes: &cachesync.Tracker{Clock: clock}}

	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53}}}}
	require.NoError(t, c.api.Create(ctx, foreign))
	_, _, err := a.Apply(ctx, owner, service(owner, 80))
	var notOwned *NotOwnedError
	require.ErrorAs(t, err, &notOwned)
	require.Equal(t, "Service shop/web already exists and is not controlled by this App; rename or delete it", err.Error())
	require.Equal(t, 0, c.applies, "nothing is merged into an object no controller owns")

	require.NoError(t, c.api.Delete(ctx, foreign))
	_, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)
	require.Equal(t, 1, c.applies)

	clock.SetTime(clock.Now().Add(cachesync.MaxWait))
	current, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Unchanged, result, "the API server shows the child as applied, though the cache still lacks it")
	require.Equal(t, "web", current.GetName())
	require.Equal(t, 1, c.applies)

	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Updated, result, "a child the owner controls is applied, in the cache or not")
	require.Equal(t, 2, c.applies)
}

func TestAChildChangedBySomeoneElseIsReverted(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	c := newLaggingCache(t)
	c.caughtUp = true
	a := &Applier{Client: c, Writes: &cachesync.Tracker{}}
	_, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)

	// Someone edits the Service; the App still wants what was applied before.
	svc := &corev1.Service{}
	require.NoError(t, c.api.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, svc))
	svc.Spec.Ports[0].Port = 9999
	require.NoError(t, c.api.Update(ctx, svc))
	_, result, err = a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Reverted, result, "the operator's own configuration, unchanged, is applied again")

	// The App asks for a new port: an update, not a revert.
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Updated, result)
	require.Equal(t, 3, c.applies)
}
