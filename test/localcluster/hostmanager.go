package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagerPolicy chooses the manager binary that runs a ClusterServiceVersion.
type ManagerPolicy func(ctx context.Context, csv string) (string, error)

// Kubelet runs the manager of App Operator as a kubelet would run the pod of OLM's Deployment:
// it starts the manager when OLM creates the Deployment, replaces it with the new release's
// manager when an upgrade hands the Deployment to another ClusterServiceVersion, and stops it
// when OLM deletes the Deployment. Like a Deployment's rollout, it also restarts the manager
// when the pod template changes: OLM changes it when it makes a new serving certificate (its
// CA's hash is an annotation of the template), and the new manager reads the new certificate.
type Kubelet struct {
	cluster *Cluster
	policy  ManagerPolicy
	stop    context.CancelFunc
	done    chan struct{}

	mu       sync.Mutex
	operator *Operator
	csv      string
	template string
	err      error
	runs     int
	// failures counts the managers in a row that did not become ready.
	failures int
}

// maxFailures is how many managers in a row may fail to become ready before WaitFor gives up,
// as a kubelet's crash loop shows that restarting does not help.
const maxFailures = 3

// RunKubelet starts following OLM's Deployment of App Operator.
func (c *Cluster) RunKubelet(policy ManagerPolicy) *Kubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kubelet{cluster: c, policy: policy, stop: cancel, done: make(chan struct{})}
	go k.loop(ctx)
	return k
}

func (k *Kubelet) loop(ctx context.Context) {
	defer close(k.done)
	for ctx.Err() == nil {
		k.sync(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.operator != nil {
		_ = k.operator.Stop(10 * time.Second)
	}
}

// sync makes the running manager match the Deployment.
func (k *Kubelet) sync(ctx context.Context) {
	d := &appsv1.Deployment{}
	err := k.cluster.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName}, d)
	owner, template := "", ""
	switch {
	case err == nil && d.DeletionTimestamp == nil:
		owner = d.Labels["olm.owner"]
		raw, err := json.Marshal(d.Spec.Template)
		if err != nil {
			return
		}
		template = string(raw)
	case err != nil && !apierrors.IsNotFound(err):
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if owner == k.csv && template == k.template && (k.operator == nil || !k.operator.Exited()) {
		return
	}
	if k.operator != nil {
		_ = k.operator.Stop(10 * time.Second)
		k.operator = nil
	}
	k.csv, k.template = owner, template
	if owner == "" {
		return
	}
	manager, err := k.policy(ctx, owner)
	if err == nil {
		k.runs++
		k.operator, err = k.cluster.RunOperator(ctx, fmt.Sprintf("manager-%s-%d", owner, k.runs), manager)
	}
	k.err = err
	if err == nil {
		k.failures = 0
		return
	}
	k.failures++
	k.csv, k.template = "", "" // try again at the next sync
}

// WaitFor waits until the manager of a ClusterServiceVersion runs and is ready.
func (k *Kubelet) WaitFor(ctx context.Context, csv string, timeout time.Duration) (*Operator, error) {
	var op *Operator
	err := k.cluster.Poll(ctx, timeout, "the manager of "+csv+" to run", func(context.Context) (bool, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.csv == csv && k.operator != nil && !k.operator.Exited() {
			op = k.operator
			return true, nil
		}
		if k.failures >= maxFailures {
			return false, stopPolling{fmt.Errorf("%d managers in a row did not become ready; the last: %w", k.failures, k.err)}
		}
		return false, k.err
	})
	return op, err
}

// Restart stops the running manager and starts it again with managerArgs in place of the
// cluster's ManagerArgs, as a rollout of new arguments would, and waits until it is ready.
func (k *Kubelet) Restart(ctx context.Context, managerArgs []string, timeout time.Duration) (*Operator, error) {
	k.mu.Lock()
	csv := k.csv
	k.cluster.ManagerArgs = managerArgs
	if k.operator != nil {
		_ = k.operator.Stop(10 * time.Second)
	}
	k.mu.Unlock()
	// The next sync finds the manager exited and starts it again.
	return k.WaitFor(ctx, csv, timeout)
}

// Operator is the manager running now, if any.
func (k *Kubelet) Operator() *Operator {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.operator
}

// Running returns the ClusterServiceVersion whose manager runs now, or "".
func (k *Kubelet) Running() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.operator == nil || k.operator.Exited() {
		return ""
	}
	return k.csv
}

// Stop stops following and stops the manager.
func (k *Kubelet) Stop() {
	k.stop()
	<-k.done
}
