package main

import (
	"context"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mycompany/app-operator/test/localcluster"
)

// managerStart is how long a restarted manager may take to be ready.
const managerStart = 3 * time.Minute

// pprofPort is where the manager serves pprof, on its pod IP.
const pprofPort = 6060

// steadyWindow counts the operator's writes over at least o.steady after a forced resync of
// every App: it restarts the manager with a sync period of o.resync, so that the new manager
// reconciles every App as it starts and again at its first resync, which the window includes,
// and compares every resourceVersion before and after. It leaves that manager running:
// restartedHeap restarts it with the convergence phases' arguments. offset is where the audit
// log's unread part begins.
func steadyWindow(ctx context.Context, c *localcluster.Cluster, restart restarter, sa string, o options, managerArgs []string, token string, offset int64, r *Result) error {
	before, err := resourceVersions(ctx, c)
	if err != nil {
		return err
	}
	if _, offset, err = requests(c.AuditLog(), offset, sa); err != nil {
		return err
	}
	op, err := restart(append(slices.Clone(managerArgs), "--sync-period="+o.resync.String()))
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(o.steady)
	// The restarted manager counts from zero: its start reconciles every App once, and each
	// resync again. client-go looks for a due resync once a period, so the first comes one to
	// two periods after the start: the window lasts until it has come.
	r.SteadyReconciles, err = waitReconciles(ctx, c, localcluster.NewScraper(op.MetricsURL, token), 2*o.apps, 3*o.resync, "the restarted manager's resync of every App")
	if err != nil {
		return err
	}
	r.SteadySeconds = time.Since(start).Seconds()
	if r.SteadyAllWrites, _, err = requests(c.AuditLog(), offset, sa); err != nil {
		return err
	}
	r.SteadyWrites, r.SteadyReads = managedWrites(r.SteadyAllWrites), managedReads(r.SteadyAllWrites)
	after, err := resourceVersions(ctx, c)
	if err != nil {
		return err
	}
	for k, v := range before {
		if after[k] != v {
			r.SteadyChangedRVs++
		}
	}
	return nil
}

// restartedHeap restarts the manager with managerArgs, as a rollout, an upgrade or a failover
// would, waits until it has reconciled every App from its new cache, and measures its heap
// once the controller is idle. The new manager caches the same objects as the one that
// watched them converge, but read in one list each: without the garbage the convergence left
// in the spans between them, and without the Events it emitted. It also reads what the new
// manager spent to get there: its CPU seconds and garbage collections since it started.
func restartedHeap(ctx context.Context, c *localcluster.Cluster, restart restarter, managerArgs []string, apps int, token, profile string) (restarted, error) {
	op, err := restart(managerArgs)
	if err != nil {
		return restarted{}, err
	}
	s := localcluster.NewScraper(op.MetricsURL, token)
	if _, err := waitReconciles(ctx, c, s, apps, 10*time.Minute, "the restarted manager's reconcile of every App"); err != nil {
		return restarted{}, err
	}
	f, err := s.Families(ctx)
	if err != nil {
		return restarted{}, err
	}
	r := restarted{cpuSeconds: localcluster.Counter(f, "process_cpu_seconds_total", "", ""), gcCycles: gcCycles(f)}
	r.heap, err = idleHeap(ctx, s, op.PprofAddr(pprofPort), profile)
	return r, err
}

// restarted is what restartedHeap measured.
type restarted struct {
	heap localcluster.Heap
	// cpuSeconds and gcCycles are the new manager's from its start until it had reconciled
	// every App.
	cpuSeconds, gcCycles float64
}

// gcCycles is the number of garbage collections a Go process finished since it started.
func gcCycles(f map[string]*dto.MetricFamily) float64 {
	for _, m := range f["go_gc_duration_seconds"].GetMetric() {
		return float64(m.GetSummary().GetSampleCount())
	}
	return 0
}

// restarter restarts the manager with new arguments and returns the new one, once ready.
type restarter func(args []string) (*localcluster.Manager, error)
