package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/test/framework"
)

type options struct {
	heapOnly          bool
	apps, concurrency int
	steady, resync    time.Duration
	out, root, bin    string
}

func run(ctx context.Context, o options) (Result, error) {
	r := Result{Apps: o.apps, Concurrency: o.concurrency}
	dir := filepath.Join(o.root, ".cache", "bench")
	framework.Reap(filepath.Dir(dir), o.bin)
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	policy := filepath.Join(dir, "..", "bench-audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return r, err
	}
	nodes := max(2, int(math.Ceil(float64(o.apps)/1500))+1)
	step("starting a local control plane with %d fake nodes and OLM", nodes)
	c, err := framework.StartWithOLM(ctx, framework.Options{Name: "app-bench", Dir: dir, Bin: o.bin, Nodes: nodes, PodsPerNode: 2000, AuditPolicy: policy}, o.root)
	if err != nil {
		return r, err
	}
	defer c.Stop()
	if err := c.ServeCatalog(ctx, filepath.Join(o.root, "catalog")); err != nil {
		return r, err
	}
	pprof, err := freeAddr()
	if err != nil {
		return r, err
	}
	c.ManagerArgs = []string{"--pprof-bind-address=" + pprof, "--sync-period=" + o.resync.String()}
	manager := filepath.Join(o.bin, "manager")
	kubelet := c.RunKubelet(func(context.Context, string) (string, error) { return manager, nil })
	defer kubelet.Stop()
	head, err := framework.ChannelHead(filepath.Join(o.root, "catalog"))
	if err != nil {
		return r, err
	}
	if err := c.Subscribe(ctx, framework.Subscription{}); err != nil {
		return r, err
	}
	if _, err := c.WaitForCSV(ctx, head, 3*time.Minute); err != nil {
		return r, err
	}
	op, err := kubelet.WaitFor(ctx, head, 3*time.Minute)
	if err != nil {
		return r, err
	}
	if err := c.WaitForConversionWebhook(ctx); err != nil {
		return r, err
	}
	token, err := c.MetricsReaderToken(ctx, "default", "bench-scraper")
	if err != nil {
		return r, err
	}
	s := framework.NewScraper(op.MetricsURL, token)
	profile := filepath.Join(filepath.Dir(o.out), fmt.Sprintf("bench-heap-%d.pb.gz", o.apps))
	base, err := framework.HeapAfterGC(ctx, pprof, profile+".base")
	if err != nil {
		return r, err
	}
	r.HeapBaseBytes, r.HeapLiveBaseBytes = base.InuseBytes, base.AllocBytes

	if !o.heapOnly {
		step("baseline: creating %d Deployments and Services directly, %d at a time", o.apps, o.concurrency)
		base, p50, p99, err := baseline(ctx, c, o)
		if err != nil {
			return r, err
		}
		r.BaselineSeconds, r.BaselineCreate, r.BaselineCPU = base.took.Seconds(), base.created.Seconds(), base.cpu
		r.BaselineP50Millis, r.BaselineP99Millis = millis(p50), millis(p99)
	}

	step("operator: creating %d Apps, %d at a time", o.apps, o.concurrency)
	_, offset, err := writes(c.AuditLog(), 0, op.ServiceAccount)
	if err != nil {
		return r, err
	}
	convertedBefore, err := conversions(ctx, c)
	if err != nil {
		return r, err
	}
	converge, err := convergeApps(ctx, c, o)
	if err != nil {
		return r, err
	}
	r.ConvergeSeconds, r.CreateSeconds, r.ConvergeCPU = converge.took.Seconds(), converge.created.Seconds(), converge.cpu
	convertedAfter, err := conversions(ctx, c)
	if err != nil {
		return r, err
	}
	r.ConversionsPerApp = (convertedAfter - convertedBefore) / float64(o.apps)
	if r.BaselineSeconds > 0 {
		r.Ratio = r.ConvergeSeconds / r.BaselineSeconds
	}
	if err := waitIdle(ctx, s); err != nil {
		return r, err
	}
	if r.ConvergenceWrites, offset, err = writes(c.AuditLog(), offset, op.ServiceAccount); err != nil {
		return r, err
	}
	r.WritesPerApp = float64(managedWrites(r.ConvergenceWrites)) / float64(o.apps)

	f, err := s.Families(ctx)
	if err != nil {
		return r, err
	}
	if p50, err := framework.Quantile(f, "controller_runtime_reconcile_time_seconds", "controller", "app", 0.5); err == nil {
		r.P50Millis = p50 * 1000
	}
	if p99, err := framework.Quantile(f, "controller_runtime_reconcile_time_seconds", "controller", "app", 0.99); err == nil {
		r.P99Millis = p99 * 1000
	}
	heap, err := idleHeap(ctx, s, pprof, profile)
	if err != nil {
		return r, err
	}
	r.HeapBytes, r.HeapLiveBytes = heap.InuseBytes, heap.AllocBytes
	r.HeapKiBPerApp = r.HeapBytes / 1024 / float64(o.apps)
	r.HeapKiBMarginal = (r.HeapBytes - r.HeapBaseBytes) / 1024 / float64(o.apps)
	if o.heapOnly {
		return r, nil
	}

	step("steady state: watching writes for %v, which includes a resync of every App", o.steady)
	before, err := resourceVersions(ctx, c)
	if err != nil {
		return r, err
	}
	reconciles := framework.Counter(f, "operator_reconcile_count", "controller", "app")
	if _, offset, err = writes(c.AuditLog(), offset, op.ServiceAccount); err != nil {
		return r, err
	}
	time.Sleep(o.steady)
	if r.SteadyAllWrites, _, err = writes(c.AuditLog(), offset, op.ServiceAccount); err != nil {
		return r, err
	}
	r.SteadyWrites = managedWrites(r.SteadyAllWrites)
	after, err := resourceVersions(ctx, c)
	if err != nil {
		return r, err
	}
	for k, v := range before {
		if after[k] != v {
			r.SteadyChangedRVs++
		}
	}
	if f, err = s.Families(ctx); err != nil {
		return r, err
	}
	r.SteadyReconciles = framework.Counter(f, "operator_reconcile_count", "controller", "app") - reconciles
	if r.SteadyReconciles < float64(o.apps) {
		return r, fmt.Errorf("the steady window saw %v reconciles, fewer than the %d Apps: no resync happened", r.SteadyReconciles, o.apps)
	}
	return r, nil
}

// phase is what one side of the comparison took: the time until every object was created,
// the time until every one was Available, and the CPU seconds each component used meanwhile.
type phase struct {
	created, took time.Duration
	cpu           map[string]float64
}

// measure watches namespace ns for objects like obj, runs create, then waits until available
// reports true of what the watch shows, and times both.
func measure(ctx context.Context, c *framework.Cluster, ns string, obj client.Object, what string, create func() error, available func(context.Context, client.Reader) (bool, error)) (phase, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched, err := watchNamespace(ctx, c, ns, obj)
	if err != nil {
		return phase{}, err
	}
	cpu, err := cpuSeconds(components)
	if err != nil {
		return phase{}, err
	}
	start := time.Now()
	if err := create(); err != nil {
		return phase{}, err
	}
	p := phase{created: time.Since(start)}
	err = c.PollEvery(ctx, 250*time.Millisecond, 30*time.Minute, what, func(ctx context.Context) (bool, error) {
		return available(ctx, watched)
	})
	if err != nil {
		return phase{}, err
	}
	p.took = time.Since(start)
	p.cpu, err = cpuSince(components, cpu)
	return p, err
}

// baseline creates the Deployments and Services the operator would, without the operator,
// and measures the time until every Deployment is Available. It deletes them afterwards.
// p50 and p99 are the quantiles of the time to create one pair: the same writes as the
// reconcile that creates an App's children, on the same API server.
func baseline(ctx context.Context, c *framework.Cluster, o options) (p phase, p50, p99 time.Duration, err error) {
	ns := "baseline"
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return p, 0, 0, err
	}
	var mu sync.Mutex
	pairs := make([]time.Duration, 0, o.apps)
	create := func() error {
		return parallel(o.apps, o.concurrency, func(i int) error {
			began := time.Now()
			defer func() {
				mu.Lock()
				pairs = append(pairs, time.Since(began))
				mu.Unlock()
			}()
			objs := desired.For(benchApp(ns, i), desired.Options{})
			for _, obj := range []client.Object{objs.Deployment, objs.Service} {
				// Owned by no App and outside the operator's label-scoped cache.
				obj.SetOwnerReferences(nil)
				obj.SetLabels(map[string]string{"bench": "baseline"})
				if err := c.Client.Create(ctx, obj); err != nil {
					return err
				}
			}
			return nil
		})
	}
	p, err = measure(ctx, c, ns, &appsv1.Deployment{}, "every baseline Deployment to be Available", create, func(ctx context.Context, watched client.Reader) (bool, error) {
		deployments := &appsv1.DeploymentList{}
		if err := watched.List(ctx, deployments, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		available := 0
		for _, d := range deployments.Items {
			if d.Status.AvailableReplicas >= 1 {
				available++
			}
		}
		return available == o.apps, nil
	})
	if err != nil {
		return p, 0, 0, err
	}
	p50, p99 = quantile(pairs, 0.5), quantile(pairs, 0.99)
	step("baseline: %d Deployments Available in %.2fs; deleting them", o.apps, p.took.Seconds())
	if err := c.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return p, 0, 0, err
	}
	err = c.PollEvery(ctx, time.Second, 30*time.Minute, "the baseline namespace to be gone", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	})
	return p, p50, p99, err
}

// convergeApps creates the Apps and measures the time until every one is Available.
func convergeApps(ctx context.Context, c *framework.Cluster, o options) (phase, error) {
	ns := "bench"
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return phase{}, err
	}
	create := func() error {
		return parallel(o.apps, o.concurrency, func(i int) error { return c.Client.Create(ctx, benchApp(ns, i)) })
	}
	return measure(ctx, c, ns, &appv1.App{}, "every App to be Available", create, func(ctx context.Context, watched client.Reader) (bool, error) {
		apps := &appv1.AppList{}
		if err := watched.List(ctx, apps, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		available := 0
		for _, a := range apps.Items {
			if meta.IsStatusConditionTrue(a.Status.Conditions, appv1.ConditionAvailable) && a.Status.AvailableReplicas >= 1 {
				available++
			}
		}
		return available == o.apps, nil
	})
}

func benchApp(ns string, i int) *appv1.App {
	return &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%05d", i), UID: "baseline"},
		Spec:       appv1.AppSpec{Image: "nginxinc/nginx-unprivileged:1.27", Replicas: ptr.To(int32(1))},
	}
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
