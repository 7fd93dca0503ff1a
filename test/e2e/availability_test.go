package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// A client writing and reading Apps without pause sees no write refused and no read failed
// while the managers roll out, while each is evicted in turn as a node drain does (so each
// serves every webhook alone for a while), and when the leader is killed with SIGKILL.
func TestNoWriteIsRefusedWhileManagersComeAndGo(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	csv := headCSV()
	args, err := cluster.ManagerArgs(ctx, csv)
	require.NoError(t, err)

	var failed []string
	phase := func(name string, do func()) {
		f, err := cluster.ProbeDuring(ctx, ns, false, do)
		require.NoError(t, err)
		t.Log(f.Report(name))
		require.Positive(t, f.Writes, "the probe wrote")
		if f.Refused+f.Failed > 0 {
			failed = append(failed, name+": "+f.String())
		}
	}

	phase("rollout", func() {
		_, err := cluster.RestartManager(ctx, csv, args, 3*time.Minute)
		require.NoError(t, err)
	})
	managers, _, err := cluster.Managers(ctx)
	require.NoError(t, err)
	require.Len(t, managers, 2)
	for _, m := range managers {
		phase("evict "+m.Pod.Name, func() {
			eventually(t, time.Minute, func(c *assert.CollectT) {
				// The PodDisruptionBudget refuses it until the other manager is ready again.
				require.NoError(c, cluster.Clientset.PolicyV1().Evictions(m.Pod.Namespace).Evict(ctx,
					&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: m.Pod.Namespace, Name: m.Pod.Name}}))
			}, "the eviction of "+m.Pod.Name)
			waitForTwoManagers(t)
		})
	}
	phase("SIGKILL of the leader", func() {
		leader := manager(t)
		restarts := restartCount(t, leader.Pod.Name)
		require.NoError(t, cluster.Crash(ctx, leader.Pod, "manager"))
		eventually(t, time.Minute, func(c *assert.CollectT) {
			require.Greater(c, restartCount(t, leader.Pod.Name), restarts)
		}, "the kubelet to restart the killed manager")
		waitForTwoManagers(t)
	})
	require.Empty(t, failed, "every write admitted and every read served")
}

func restartCount(t *testing.T, pod string) int32 {
	p := &corev1.Pod{}
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: pod}, p))
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == "manager" {
			return s.RestartCount
		}
	}
	return 0
}

func waitForTwoManagers(t *testing.T) {
	t.Helper()
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		managers, _, err := cluster.Managers(context.Background())
		require.NoError(c, err)
		require.Len(c, managers, 2)
	}, "two managers to be ready")
	_, err := cluster.WaitForManager(context.Background(), headCSV(), time.Minute)
	require.NoError(t, err)
}
