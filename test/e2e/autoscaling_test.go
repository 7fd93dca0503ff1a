package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// An autoscaled App scales up under load and back down once the load ends, with the pods'
// CPU measured by the real node's kubelet and served by metrics-server. The App's status and
// kubectl's DESIRED column follow the autoscaler's count.
func TestAnAutoscaledAppScalesWithLoad(t *testing.T) {
	t.Parallel() // it waits for the autoscaler; the other waiting tests wait alongside
	ctx := context.Background()
	app := sample(t, namespace(t))
	app.Spec.Replicas = nil
	app.Spec.DisruptionBudget = nil
	app.Spec.Autoscaling = &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(1)), MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To(int32(50))}
	require.NoError(t, cluster.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)
	AssertAppAvailable(t, key, 1)
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		require.NoError(c, cluster.Client.Get(ctx, key, hpa))
		require.NotEmpty(c, hpa.Status.CurrentMetrics, "the autoscaler reads the pods' CPU: %+v", hpa.Status.Conditions)
	}, "metrics-server to report the App's pods")

	svc := &corev1.Service{}
	require.NoError(t, cluster.Client.Get(ctx, key, svc))
	// One client keeps at most one core busy: many times the 25m of CPU (50% of the pods'
	// 50m request) that one pod may use, and room left for the other tests.
	stop := load(t, fmt.Sprintf("http://%s:%d/work?ms=100", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port), 1)
	scaledTo := func(want func(int32) bool, what string) {
		eventually(t, 4*time.Minute, func(c *assert.CollectT) {
			require.NoError(c, cluster.Client.Get(ctx, key, app))
			require.NotNil(c, app.Status.DesiredReplicas)
			desired := *app.Status.DesiredReplicas
			require.True(c, want(desired), "desiredReplicas %d", desired)
			require.Equal(c, desired, app.Status.AvailableReplicas, "every desired pod available")
			out, err := kubectl(t, "get", "apps.mycompany.com", "-n", key.Namespace, "--no-headers")
			require.NoError(c, err, out)
			require.Equal(c, fmt.Sprint(desired), strings.Fields(out)[2], "DESIRED: %s", out)
		}, what)
	}
	scaledTo(func(n int32) bool { return n > 1 }, "the App to scale up under load")
	t.Logf("under load: %d pods", *app.Status.DesiredReplicas)
	stop()
	scaledTo(func(n int32) bool { return n == 1 }, "the App to scale back down once the load ended")
}

// load sends requests to url from n clients without pause until the returned stop is called.
func load(t *testing.T, url string, n int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 10 * time.Second}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if resp, err := hc.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}
