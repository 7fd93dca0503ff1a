package operator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// gcPercent reads the collector's pace.
func gcPercent() int {
	p := debug.SetGCPercent(0)
	debug.SetGCPercent(p)
	return p
}

// fillingCache records what cacheFill asks of it, and the collector's pace while it waits.
type fillingCache struct {
	synced      bool
	failOn      client.Object
	asked       []string
	paceWaiting int
}

func (c *fillingCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	if fmt.Sprintf("%T", obj) == fmt.Sprintf("%T", c.failOn) {
		return nil, errors.New("the API server does not serve it")
	}
	c.asked = append(c.asked, fmt.Sprintf("%T", obj))
	return nil, nil
}

func (c *fillingCache) WaitForCacheSync(context.Context) bool {
	c.paceWaiting = gcPercent()
	return c.synced
}

func TestTheCollectorPacesFasterOnlyWhileTheCachesFill(t *testing.T) {
	const pace = 77 // the process's own, which the fill gives back
	defer debug.SetGCPercent(debug.SetGCPercent(pace))
	every := []string{"*v1.App", "*v1.Deployment", "*v1.Service", "*v2.HorizontalPodAutoscaler", "*v1.PodDisruptionBudget"}
	for name, tc := range map[string]struct {
		cache       fillingCache
		wantAsked   []string
		wantWaiting int
		wantErr     string
	}{
		"the caches fill": {cache: fillingCache{synced: true}, wantAsked: every, wantWaiting: FillGCPercent},
		"the manager stops before they are full": {cache: fillingCache{synced: false}, wantAsked: every,
			wantWaiting: FillGCPercent},
		"a kind cannot be watched": {cache: fillingCache{failOn: &corev1.Service{}}, wantAsked: every[:2],
			wantErr: "filling the cache of *v1.Service: the API server does not serve it"},
	} {
		t.Run(name, func(t *testing.T) {
			f := &cacheFill{cache: &tc.cache, kinds: watched(), percent: FillGCPercent, log: logr.Discard()}
			err := f.Start(context.Background())
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantAsked, tc.cache.asked, "the kinds whose informers it started")
			assert.Equal(t, tc.wantWaiting, tc.cache.paceWaiting, "the pace while the caches fill")
			assert.Equal(t, pace, gcPercent(), "the pace after")
		})
	}
	assert.True(t, (&cacheFill{}).NeedLeaderElection(), "it runs on the leader, whose caches fill")
}
