package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mycompany/app-operator/test/localcluster"
)

type options struct {
	heapOnly                  bool
	apps, concurrency, rounds int
	steady, resync, timeout   time.Duration
	out, root, bin            string
	convergePlot              string
	managerArgs               []string
	managerEnv                []string
}

// validate refuses counts and durations the benchmark cannot run with, naming the flag.
func (o options) validate() error {
	for _, f := range []struct {
		name  string
		value int
	}{{"--apps", o.apps}, {"--concurrency", o.concurrency}, {"--rounds", o.rounds}} {
		if f.value < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", f.name, f.value)
		}
	}
	// A sync period of zero turns the manager's resyncs off: the steady window would wait for
	// one in vain.
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %v", o.timeout)
	}
	if o.resync <= 0 {
		return fmt.Errorf("--resync must be positive, got %v", o.resync)
	}
	if o.steady < 0 {
		return fmt.Errorf("--steady must not be negative, got %v", o.steady)
	}
	for _, arg := range o.managerArgs {
		switch {
		case !strings.HasPrefix(arg, "--"):
			return fmt.Errorf("--manager-arg must be a flag of the manager, such as --max-concurrent-reconciles=4, got %q", arg)
		case strings.HasPrefix(arg, pprofFlag):
			return fmt.Errorf("--manager-arg must not set %s: the benchmark sets it to read the manager's heap", pprofFlag)
		}
	}
	for _, v := range o.managerEnv {
		if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
			return fmt.Errorf("--manager-env must be NAME=VALUE, such as GOGC=50, got %q", v)
		}
	}
	return nil
}

// pprofFlag is the manager's flag for the address of its profiles.
const pprofFlag = "--pprof-bind-address"

// installed is App Operator installed on the benchmark's cluster, its manager serving pprof.
type installed struct {
	c           *localcluster.Cluster
	op          *localcluster.Manager
	restart     restarter
	managerArgs []string
	token       string
	scraper     *localcluster.Scraper
	stopCluster func()
}

// install starts the benchmark's cluster, installs the release being prepared from its catalog
// image, and restarts its manager with pprof on its pod IP and the benchmark's arguments.
func install(ctx context.Context, o options) (*installed, error) {
	dir := filepath.Join(o.root, ".cache", "bench")
	localcluster.Reap(filepath.Dir(dir), o.bin)
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "..", "bench-audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	nodes := max(2, int(math.Ceil(float64(o.apps)/1500))+1)
	step("building the images of App Operator's releases")
	rel, err := localcluster.BuildReleases(ctx, o.root)
	if err != nil {
		return nil, err
	}
	step("starting a local cluster with %d fake nodes, its real node and OLM", nodes)
	c, err := localcluster.StartWithOLM(ctx, localcluster.Options{Name: "app-bench", Dir: dir, Bin: o.bin, FakeNodes: nodes, PodsPerNode: 2000, AuditPolicy: policy}, o.root)
	if err != nil {
		return nil, err
	}
	in := &installed{c: c, stopCluster: func() { _ = c.Stop() }}
	if err := in.subscribe(ctx, rel, o); err != nil {
		in.stopCluster()
		return nil, err
	}
	return in, nil
}

func (in *installed) subscribe(ctx context.Context, rel *localcluster.Releases, o options) error {
	c := in.c
	head := rel.Head().CSVName()
	if err := c.PublishCatalog(ctx, rel, rel.Head().Version); err != nil {
		return err
	}
	if err := c.Subscribe(ctx, localcluster.Subscription{}); err != nil {
		return err
	}
	if _, err := c.WaitForCSV(ctx, head, 5*time.Minute); err != nil {
		return err
	}
	// The bundle's arguments, the manager's pprof endpoint on its pod IP, and --manager-arg: the
	// manager's default sync period, as users run it; the steady window forces a resync.
	bundleArgs, err := c.ManagerArgs(ctx, head)
	if err != nil {
		return err
	}
	in.managerArgs = append(append(slices.Clone(bundleArgs), fmt.Sprintf("%s=:%d", pprofFlag, pprofPort)), o.managerArgs...)
	if err := setManagerEnv(ctx, c, head, o.managerEnv); err != nil {
		return err
	}
	in.restart = func(args []string) (*localcluster.Manager, error) {
		return c.RestartManager(ctx, head, args, managerStart)
	}
	if in.op, err = in.restart(in.managerArgs); err != nil {
		return err
	}
	if err := c.WaitForCRD(ctx); err != nil {
		return err
	}
	if in.token, err = c.MetricsReaderToken(ctx, "default", "bench-scraper"); err != nil {
		return err
	}
	in.scraper = localcluster.NewScraper(in.op.MetricsURL, in.token)
	return nil
}

func run(ctx context.Context, o options) (Result, error) {
	r := Result{Apps: o.apps, Concurrency: o.concurrency, ManagerArgs: o.managerArgs, ManagerEnv: o.managerEnv}
	in, err := install(ctx, o)
	if err != nil {
		return r, err
	}
	defer in.stopCluster()
	c, op, s, token, managerArgs, restart := in.c, in.op, in.scraper, in.token, in.managerArgs, in.restart
	profile := filepath.Join(filepath.Dir(o.out), fmt.Sprintf("bench-heap-%d.pb.gz", o.apps))
	base, err := localcluster.HeapAfterGC(ctx, op.PprofAddr(pprofPort), profile+".base")
	if err != nil {
		return r, err
	}
	r.HeapBaseBytes, r.HeapLiveBaseBytes = base.InuseBytes, base.AllocBytes

	var first phase
	if !o.heapOnly {
		step("baseline: creating %d Deployments and Services directly, %d at a time", o.apps, o.concurrency)
		var p50, p99 time.Duration
		if first, p50, p99, err = baseline(ctx, c, o); err != nil {
			return r, err
		}
		r.BaselineCreate = first.created.Seconds()
		r.BaselineP50Millis, r.BaselineP99Millis = millis(p50), millis(p99)
	}

	step("operator: creating %d Apps, %d at a time", o.apps, o.concurrency)
	_, offset, err := requests(c.AuditLog(), 0, op.ServiceAccount)
	if err != nil {
		return r, err
	}
	converge, err := convergeApps(ctx, c, o)
	if err != nil {
		return r, err
	}
	r.ConvergeSeconds, r.CreateSeconds, r.ConvergeCPU = converge.took.Seconds(), converge.created.Seconds(), converge.cpu
	r.FirstStatusP50Millis, r.FirstStatusP99Millis = millis(quantile(converge.firstStatus, 0.5)), millis(quantile(converge.firstStatus, 0.99))
	if err := waitIdle(ctx, s); err != nil {
		return r, err
	}
	if r.ConvergenceWrites, offset, err = requests(c.AuditLog(), offset, op.ServiceAccount); err != nil {
		return r, err
	}
	r.WritesPerApp = float64(managedWrites(r.ConvergenceWrites)) / float64(o.apps)
	r.ReadsPerApp = float64(managedReads(r.ConvergenceWrites)) / float64(o.apps)

	f, err := s.Families(ctx)
	if err != nil {
		return r, err
	}
	if p50, err := localcluster.Quantile(f, "controller_runtime_reconcile_time_seconds", "controller", "app", 0.5); err == nil {
		r.P50Millis = p50 * 1000
	}
	if p99, err := localcluster.Quantile(f, "controller_runtime_reconcile_time_seconds", "controller", "app", 0.99); err == nil {
		r.P99Millis = p99 * 1000
	}
	heap, err := idleHeap(ctx, s, op.PprofAddr(pprofPort), profile)
	if err != nil {
		return r, err
	}
	r.HeapBytes, r.HeapLiveBytes = heap.InuseBytes, heap.AllocBytes
	r.HeapKiBPerApp = r.kibPerApp(r.HeapBytes)
	r.HeapKiBMarginal = r.kibPerApp(r.HeapBytes - r.HeapBaseBytes)
	if !o.heapOnly {
		step("steady state: restarting the manager with --sync-period=%v, then watching writes for at least %v, until its first resync: its start and the resync each reconcile every App", o.resync, o.steady)
		if err := steadyWindow(ctx, c, restart, op.ServiceAccount, o, managerArgs, token, offset, &r); err != nil {
			return r, err
		}
	}
	// This restart also returns the manager to the convergence phases' arguments after the
	// steady window.
	step("heap after a restart: restarting the manager, which reconciles every App from a new cache")
	restarted, err := restartedHeap(ctx, c, restart, managerArgs, o.apps, token, strings.TrimSuffix(profile, ".pb.gz")+"-restarted.pb.gz")
	if err != nil {
		return r, err
	}
	r.HeapRestartedBytes, r.HeapLiveRestartedBytes = restarted.heap.InuseBytes, restarted.heap.AllocBytes
	r.HeapKiBPerAppRestarted = r.kibPerApp(r.HeapRestartedBytes)
	r.RestartedCPUSeconds, r.RestartedGCCycles = restarted.cpuSeconds, restarted.gcCycles
	if o.heapOnly {
		return r, nil
	}

	more, err := moreRounds(ctx, c, o, o.rounds)
	if err != nil {
		return r, err
	}
	r.Rounds = append([]Round{newRound(first, converge, false)}, more...)
	m := median(r.Rounds)
	r.comparison = m.comparison
	r.ManagerCPUMillisPerApp, r.ControlPlaneCPUMillisPerApp = cpuPerApp(m.ConvergeCPU, o.apps)
	return r, m.writeProfiles(profilePrefix(o))
}

// profilePrefix is where the API server's CPU profiles of the median round go, with -baseline.pb.gz
// and -operator.pb.gz after it.
func profilePrefix(o options) string {
	return filepath.Join(filepath.Dir(o.out), fmt.Sprintf("bench-apiserver-%d", o.apps))
}

// parallel runs do(0..n-1) with at most k in flight and returns the first error.
func parallel(n, k int, do func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// quantile returns the q-quantile of durations (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	return sorted[int(math.Ceil(q*float64(len(sorted))))-1]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// setManagerEnv sets each NAME=VALUE of env in the manager container's environment, in place
// of a variable of that name; the restart that follows rolls it out.
func setManagerEnv(ctx context.Context, c *localcluster.Cluster, csvName string, env []string) error {
	if len(env) == 0 {
		return nil
	}
	return c.EditManager(ctx, csvName, func(spec *appsv1.DeploymentSpec) {
		for i := range spec.Template.Spec.Containers {
			if ctr := &spec.Template.Spec.Containers[i]; ctr.Name == "manager" {
				for _, v := range env {
					name, value, _ := strings.Cut(v, "=")
					ctr.Env = slices.DeleteFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == name })
					ctr.Env = append(ctr.Env, corev1.EnvVar{Name: name, Value: value})
				}
			}
		}
	})
}
