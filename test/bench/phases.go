package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/test/localcluster"
)

// phase is what one side of the comparison took: the time until every object was created,
// the time until every one was Available, the CPU seconds each component used meanwhile, and
// where the API server's CPU went.
type phase struct {
	created, took time.Duration
	// firstStatus are the times from each App's creation to its first status (Apps only).
	firstStatus  []time.Duration
	curve        []Point
	cpu          map[string]float64
	apiServer    *profile.Profile
	apiServerCPU map[string]float64 // by activity
}

// measure watches namespace ns for objects like obj, runs create, then waits until available
// counts every one of n objects in what the watch shows, and times both. It records how many
// were available at each change of the count: the converge curve. watching, when set, is
// handed the watch before anything is created.
func measure(ctx context.Context, c *localcluster.Cluster, ns string, obj client.Object, n int, timeout time.Duration, what string, watching func(cache.Cache) error, create func() error, available func(context.Context, client.Reader) (int, error)) (phase, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched, err := watchNamespace(ctx, c, ns, obj)
	if err != nil {
		return phase{}, err
	}
	if watching != nil {
		if err := watching(watched); err != nil {
			return phase{}, err
		}
	}
	cpu, err := cpuSeconds(components)
	if err != nil {
		return phase{}, err
	}
	stopProfile := profileAPIServer(ctx, c)
	start := time.Now()
	if err := create(); err != nil {
		return phase{}, err
	}
	p := phase{created: time.Since(start), curve: []Point{{0, 0}}}
	err = c.PollEvery(ctx, 250*time.Millisecond, timeout, what, func(ctx context.Context) (bool, error) {
		count, err := available(ctx, watched)
		if err != nil {
			return false, err
		}
		if count != p.curve[len(p.curve)-1].Available {
			p.curve = append(p.curve, Point{Seconds: time.Since(start).Seconds(), Available: count})
		}
		return count == n, nil
	})
	if err != nil {
		return phase{}, err
	}
	p.took = time.Since(start)
	if p.cpu, err = cpuSince(components, cpu); err != nil {
		return phase{}, err
	}
	if p.apiServer, err = stopProfile(); err != nil {
		return phase{}, err
	}
	p.apiServerCPU, err = byActivity(p.apiServer)
	return p, err
}

// baseline creates the Deployments and Services the operator would, without the operator,
// and measures the time until every Deployment is Available. It deletes them afterwards.
// p50 and p99 are the quantiles of the time to create one pair: the same writes as the
// reconcile that creates an App's children, on the same API server.
func baseline(ctx context.Context, c *localcluster.Cluster, o options) (p phase, p50, p99 time.Duration, err error) {
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
	p, err = measure(ctx, c, ns, &appsv1.Deployment{}, o.apps, o.timeout, "every baseline Deployment to be Available", nil, create, func(ctx context.Context, watched client.Reader) (int, error) {
		deployments := &appsv1.DeploymentList{}
		if err := watched.List(ctx, deployments, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return 0, err
		}
		available := 0
		for _, d := range deployments.Items {
			if d.Status.AvailableReplicas >= 1 {
				available++
			}
		}
		return available, nil
	})
	if err != nil {
		return p, 0, 0, err
	}
	p50, p99 = quantile(pairs, 0.5), quantile(pairs, 0.99)
	step("baseline: %d Deployments Available in %.2fs; deleting them", o.apps, p.took.Seconds())
	return p, p50, p99, deleteNamespace(ctx, c, ns)
}

// appsNamespace holds the Apps the benchmark creates.
const appsNamespace = "bench"

// convergeApps creates the Apps and measures the time until every one is Available.
func convergeApps(ctx context.Context, c *localcluster.Cluster, o options) (phase, error) {
	ns := appsNamespace
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return phase{}, err
	}
	first := newFirstStatus()
	watching := func(watched cache.Cache) error { return first.record(ctx, watched) }
	create := func() error {
		return parallel(o.apps, o.concurrency, func(i int) error {
			app := benchApp(ns, i)
			if err := c.Client.Create(ctx, app); err != nil {
				return err
			}
			first.wasCreated(app.Name, time.Now())
			return nil
		})
	}
	p, err := measure(ctx, c, ns, &appv1.App{}, o.apps, o.timeout, "every App to be Available", watching, create, func(ctx context.Context, watched client.Reader) (int, error) {
		apps := &appv1.AppList{}
		if err := watched.List(ctx, apps, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return 0, err
		}
		available := 0
		for _, a := range apps.Items {
			if meta.IsStatusConditionTrue(a.Status.Conditions, appv1.ConditionAvailable) && a.Status.AvailableReplicas >= 1 {
				available++
			}
		}
		return available, nil
	})
	p.firstStatus = first.latencies()
	return p, err
}

// benchApp is one App of the benchmark: its pod runs on kwok's fake nodes.
func benchApp(ns string, i int) *appv1.App {
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%05d", i), UID: "baseline"},
		Spec:       appv1.AppSpec{Image: "registry.example.com/bench/web:1.27", Replicas: ptr.To(int32(1))},
	}
	localcluster.OnFakeNodes(&app.Spec)
	return app
}
