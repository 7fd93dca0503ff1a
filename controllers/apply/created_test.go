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

func TestAChildJustCreatedIsNotAppliedAgainBeforeTheCacheShowsIt(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	c := newLaggingCache(t)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	a := &Applier{Client: c, Clock: clock}

	created, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)
	require.Equal(t, "web", created.GetName())
	require.Equal(t, 1, c.applies)

	again, result, err := a.Apply(ctx, owner, service(owner, 80))
	require.NoError(t, err)
	require.Equal(t, Awaiting, result, "taken as created while the cache lags")
	require.Nil(t, again)
	require.Equal(t, 1, c.applies, "no second write")

	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Created, result, "a changed child is applied at once")
	require.Equal(t, 2, c.applies)

	clock.SetTime(clock.Now().Add(CacheLag))
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Created, result, "a child the cache still lacks after CacheLag is created again")
	require.Equal(t, 3, c.applies)

	c.caughtUp = true
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Unchanged, result)
	c.caughtUp = false
	_, result, err = a.Apply(ctx, owner, service(owner, 8080))
	require.NoError(t, err)
	require.Equal(t, Created, result, "once seen in the cache, a missing child is missing: it was deleted")
	require.Equal(t, 4, c.applies)
}

func TestForgetDropsTheChildrenOfAnOwner(t *testing.T) {
	ctx := context.Background()
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "web-uid"}}
	c := newLaggingCache(t)
	a := &Applier{Client: c}
	_, _, err := a.Apply(ctx, web, service(web, 80))
	require.NoError(t, err)

	a.Forget(client.ObjectKey{Namespace: "shop", Name: "api"})
	_, result, err := a.Apply(ctx, web, service(web, 80))
	require.NoError(t, err)
	require.Equal(t, Awaiting, result, "another owner's children are kept")

	a.Forget(client.ObjectKeyFromObject(web))
	_, result, err = a.Apply(ctx, web, service(web, 80))
	require.NoError(t, err)
	require.Equal(t, Created, result)
}

func TestAnObjectMissingFromTheCacheIsLookedForInTheAPIServer(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "owner-uid"}}
	c := newLaggingCache(t)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	a := &Applier{Client: c, Reader: c.api, Clock: clock}

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

	clock.SetTime(clock.Now().Add(CacheLag))
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
