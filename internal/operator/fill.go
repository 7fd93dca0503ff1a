package operator

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FillGCPercent is the collector's pace (GOGC) while the controller's caches first fill.
//
// The first list of every App and child is the one time the heap grows by most of its size at
// once. Each object is decoded whole and slimmed; what the cache keeps lands among what it
// drops, in the same spans. At the default pace (100) the heap doubles between collections, so
// once the caches are full what they keep is spread over up to twice the spans it needs, and Go
// never moves it. Collecting ten times as often while they fill keeps it packed: the manager's
// heap in use after a restart is then close to what its caches hold (docs/benchmarks.md). It
// costs a few more collections, once, while the manager takes over.
const FillGCPercent = 10

// informers are what cacheFill needs of the manager's cache.
type informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
	WaitForCacheSync(ctx context.Context) bool
}

// cacheFill sets the collector's pace to percent while the informers of kinds first fill,
// then gives it back the pace it had. It runs on the leader, when the controller starts and
// its caches fill; a standby's caches stay empty.
type cacheFill struct {
	cache   informers
	kinds   []client.Object
	percent int
	log     logr.Logger
}

// NeedLeaderElection makes the fill start with the controller, whose caches it is.
func (f *cacheFill) NeedLeaderElection() bool { return true }

// Start returns once the caches are full, or the manager stops first.
func (f *cacheFill) Start(ctx context.Context) error {
	start := time.Now()
	pace := debug.SetGCPercent(f.percent)
	defer debug.SetGCPercent(pace)
	for _, kind := range f.kinds {
		if _, err := f.cache.GetInformer(ctx, kind, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("filling the cache of %T: %w", kind, err)
		}
	}
	if f.cache.WaitForCacheSync(ctx) {
		f.log.Info("caches filled; the collector is back to its pace", "took", time.Since(start).Round(time.Millisecond).String(),
			"gcPercentWhileFilling", f.percent, "gcPercent", pace)
	}
	return nil
}
