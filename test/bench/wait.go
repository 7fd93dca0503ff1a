package main

import (
	"context"
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

// waitIdle waits until the App controller has had nothing queued and nothing running for
// three seconds in a row, so that every write of the convergence is counted.
func waitIdle(ctx context.Context, s *localcluster.Scraper) error {
	var since time.Time
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		f, err := s.Families(ctx)
		if err != nil {
			return err
		}
		depth, _ := localcluster.Gauge(f, "workqueue_depth", "name", "app")
		active, _ := localcluster.Gauge(f, "controller_runtime_active_workers", "controller", "app")
		if depth+active > 0 {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > 3*time.Second {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("the App controller did not go idle within 10m")
}

// idleHeap measures the manager's heap while the App controller is idle, so that the figure
// holds what the manager keeps, not the garbage of reconciles in flight (a resync of every
// App, with the benchmark's short sync period). A measurement during which a reconcile ran is
// taken again.
func idleHeap(ctx context.Context, s *localcluster.Scraper, pprofAddr, profile string) (localcluster.Heap, error) {
	for range 10 {
		if err := waitIdle(ctx, s); err != nil {
			return localcluster.Heap{}, err
		}
		before, err := s.Families(ctx)
		if err != nil {
			return localcluster.Heap{}, err
		}
		heap, err := localcluster.HeapAfterGC(ctx, pprofAddr, profile)
		if err != nil {
			return localcluster.Heap{}, err
		}
		after, err := s.Families(ctx)
		if err != nil {
			return localcluster.Heap{}, err
		}
		if reconciles(after) == reconciles(before) {
			return heap, nil
		}
	}
	return localcluster.Heap{}, fmt.Errorf("the App controller never stayed idle while its heap was measured")
}

// reconciles is the manager's count of App reconciles since it started.
func reconciles(f map[string]*dto.MetricFamily) float64 {
	return localcluster.Counter(f, "operator_reconcile_count", "controller", "app")
}

// waitReconciles waits until the manager behind s has reconciled Apps at least n times since
// it started, and returns the count it saw last.
func waitReconciles(ctx context.Context, c *localcluster.Cluster, s *localcluster.Scraper, n int, timeout time.Duration, what string) (float64, error) {
	var count float64
	err := c.PollEvery(ctx, time.Second, timeout, what, func(ctx context.Context) (bool, error) {
		f, err := s.Families(ctx)
		if err != nil {
			return false, err
		}
		count = reconciles(f)
		return count >= float64(n), nil
	})
	return count, err
}

// resourceVersions records the resourceVersion of every App, Deployment and Service of the run.
func resourceVersions(ctx context.Context, c *localcluster.Cluster) (map[string]string, error) {
	rvs := map[string]string{}
	for _, list := range []client.ObjectList{&appv1.AppList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}} {
		if err := c.Client.List(ctx, list, client.InNamespace(appsNamespace)); err != nil {
			return nil, err
		}
		items, err := metaItems(list)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			rvs[fmt.Sprintf("%T/%s", list, o.GetName())] = o.GetResourceVersion()
		}
	}
	return rvs, nil
}

func metaItems(list client.ObjectList) ([]client.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, o := range objs {
		out = append(out, o.(client.Object))
	}
	return out, nil
}
