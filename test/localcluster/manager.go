package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeploymentName is the manager Deployment of App Operator's ClusterServiceVersion.
const DeploymentName = "app-operator-controller-manager"

// Manager is a pod of App Operator's manager, as OLM's Deployment runs it on the real node.
type Manager struct {
	Pod *corev1.Pod
	// CSV is the ClusterServiceVersion whose Deployment runs it.
	CSV string
	// MetricsURL is its metrics endpoint, WebhookAddr where it serves webhooks: on its pod IP.
	MetricsURL, WebhookAddr string
	// ServiceAccount is the identity it runs as.
	ServiceAccount string
}

// PprofAddr is the manager's pprof endpoint on port, when its arguments enable it there.
func (m *Manager) PprofAddr(port int) string { return fmt.Sprintf("%s:%d", m.Pod.Status.PodIP, port) }

func managerOf(p *corev1.Pod, csv string) *Manager {
	return &Manager{Pod: p, CSV: csv, MetricsURL: "https://" + p.Status.PodIP + ":8443/metrics", WebhookAddr: p.Status.PodIP + ":9443",
		ServiceAccount: "system:serviceaccount:" + p.Namespace + ":" + p.Spec.ServiceAccountName}
}

// Managers returns the manager pods that run and are ready, and the ClusterServiceVersion
// whose Deployment runs them ("" when none does).
func (c *Cluster) Managers(ctx context.Context) ([]*Manager, string, error) {
	d := &appsv1.Deployment{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName}, d); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	csv := d.Labels["olm.owner"]
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(OperatorsNamespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return nil, "", err
	}
	var out []*Manager
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
			out = append(out, managerOf(p, csv))
		}
	}
	slices.SortFunc(out, func(a, b *Manager) int { return strings.Compare(a.Pod.Name, b.Pod.Name) })
	return out, csv, nil
}

// LeaseName is the manager's leader-election Lease, in its own namespace.
const LeaseName = "app-operator.mycompany.com"

// leaseHolder returns who holds the manager's Lease: the leader's pod name, an underscore and
// a unique ID, as controller-runtime names it; "" when nobody does.
func (c *Cluster) leaseHolder(ctx context.Context) (string, error) {
	l := &coordinationv1.Lease{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: LeaseName}, l); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitForManager waits until the Deployment of a ClusterServiceVersion has rolled out: every
// replica updated, ready and available, no pod of an older template left, and one of them
// leads. It returns the leader, the replica that reconciles and counts reconciles. While it
// waits it watches for what users would see go wrong, and says it.
func (c *Cluster) WaitForManager(ctx context.Context, csv string, timeout time.Duration) (*Manager, error) {
	var found *Manager
	var last string
	err := c.Poll(ctx, timeout, "the manager of "+csv+" to run and be ready", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName}, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if d.Labels["olm.owner"] != csv {
			last = "the Deployment belongs to " + d.Labels["olm.owner"]
			return false, nil
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.Replicas != want {
			last = fmt.Sprintf("%d of %d pods updated, %d ready, %d in all; %s", st.UpdatedReplicas, want, st.ReadyReplicas, st.Replicas, c.podTrouble(ctx, d))
			return false, nil
		}
		managers, _, err := c.Managers(ctx)
		if err != nil || len(managers) == 0 {
			return false, err
		}
		holder, err := c.leaseHolder(ctx)
		if err != nil {
			return false, err
		}
		for _, m := range managers {
			if strings.HasPrefix(holder, m.Pod.Name+"_") {
				found = m
				return true, nil
			}
		}
		last = fmt.Sprintf("the lease %s is held by %q, none of the ready pods", LeaseName, holder)
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, last)
	}
	return found, nil
}

// podTrouble says why the Deployment's pods are not ready, as kubectl describe would.
func (c *Cluster) podTrouble(ctx context.Context, d *appsv1.Deployment) string {
	return c.podTroubleByLabel(ctx, d.Namespace, d.Spec.Selector.MatchLabels)
}

// podTroubleByLabel says why the pods of a label selector are not ready.
func (c *Cluster) podTroubleByLabel(ctx context.Context, namespace string, labels map[string]string) string {
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		for _, s := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if w := s.State.Waiting; w != nil && w.Reason != "" {
				out = append(out, fmt.Sprintf("pod %s container %s waiting: %s %s", p.Name, s.Name, w.Reason, w.Message))
			}
		}
		if p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "" {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
					out = append(out, fmt.Sprintf("pod %s unschedulable: %s", p.Name, cond.Message))
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

// EditManager changes the manager's Deployment in a ClusterServiceVersion's install strategy,
// from which OLM rolls the Deployment out again, as a user editing the CSV would.
func (c *Cluster) EditManager(ctx context.Context, csvName string, edit func(*appsv1.DeploymentSpec)) error {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: csvName}, csv); err != nil {
		return err
	}
	patch := client.MergeFrom(csv.DeepCopy())
	specs := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	for i := range specs {
		if specs[i].Name == DeploymentName {
			edit(&specs[i].Spec)
			return c.Client.Patch(ctx, csv, patch)
		}
	}
	return fmt.Errorf("ClusterServiceVersion %s has no Deployment %s", csvName, DeploymentName)
}

// SetManagerArgs replaces the manager container's arguments in a ClusterServiceVersion.
func (c *Cluster) SetManagerArgs(ctx context.Context, csvName string, args []string) error {
	return c.EditManager(ctx, csvName, func(spec *appsv1.DeploymentSpec) {
		for j := range spec.Template.Spec.Containers {
			if spec.Template.Spec.Containers[j].Name == "manager" {
				spec.Template.Spec.Containers[j].Args = args
			}
		}
	})
}

// RestartManager gives the manager new arguments in a ClusterServiceVersion and restarts it,
// as a rollout does (kubectl rollout restart's annotation, in the CSV, since OLM keeps the
// Deployment as the CSV describes it), and returns a manager of the new pod template once the
// rollout is over.
func (c *Cluster) RestartManager(ctx context.Context, csvName string, args []string, timeout time.Duration) (*Manager, error) {
	restartedAt := time.Now().Format(time.RFC3339Nano)
	if err := c.EditManager(ctx, csvName, func(spec *appsv1.DeploymentSpec) {
		if spec.Template.Annotations == nil {
			spec.Template.Annotations = map[string]string{}
		}
		spec.Template.Annotations[restartedAtAnnotation] = restartedAt
		for j := range spec.Template.Spec.Containers {
			if spec.Template.Spec.Containers[j].Name == "manager" {
				spec.Template.Spec.Containers[j].Args = args
			}
		}
	}); err != nil {
		return nil, err
	}
	if err := c.Poll(ctx, time.Minute, "OLM to roll out the manager's new pod template", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName}, d); err != nil {
			return false, err
		}
		return d.Spec.Template.Annotations[restartedAtAnnotation] == restartedAt, nil
	}); err != nil {
		return nil, err
	}
	var m *Manager
	err := c.Poll(ctx, timeout, "the restarted manager to be ready", func(ctx context.Context) (bool, error) {
		var err error
		if m, err = c.WaitForManager(ctx, csvName, timeout); err != nil {
			return false, err
		}
		return m.Pod.Annotations[restartedAtAnnotation] == restartedAt, nil
	})
	return m, err
}

const restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// ManagerArgs returns the manager's arguments in a ClusterServiceVersion.
func (c *Cluster) ManagerArgs(ctx context.Context, csvName string) ([]string, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: csvName}, csv); err != nil {
		return nil, err
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, ctr := range d.Spec.Template.Spec.Containers {
			if ctr.Name == "manager" {
				return slices.Clone(ctr.Args), nil
			}
		}
	}
	return nil, fmt.Errorf("ClusterServiceVersion %s runs no container named manager", csvName)
}

// Crash kills a pod's container with SIGKILL, as the kernel's OOM killer or a crash would: the
// kubelet restarts it in the same pod, after its back-off if it crashed recently.
func (c *Cluster) Crash(ctx context.Context, pod *corev1.Pod, container string) error {
	pid, err := containerPid(ctx, pod, container)
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// containerPid finds the host pid of a pod's running container through the CRI.
func containerPid(ctx context.Context, pod *corev1.Pod, container string) (int, error) {
	conn, err := grpc.NewClient("unix://"+containerdSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(pod.UID), "io.kubernetes.container.name": container}}})
	if err != nil {
		return 0, err
	}
	if len(list.Containers) == 0 {
		return 0, fmt.Errorf("pod %s/%s runs no container %s", pod.Namespace, pod.Name, container)
	}
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: list.Containers[0].Id, Verbose: true})
	if err != nil {
		return 0, err
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid == 0 {
		return 0, fmt.Errorf("the runtime does not say the pid of container %s of pod %s/%s", container, pod.Namespace, pod.Name)
	}
	return info.Pid, nil
}

// Logs returns a pod's container's log, through the API server and the kubelet, as kubectl logs.
func (c *Cluster) Logs(ctx context.Context, pod *corev1.Pod, container string) (string, error) {
	raw, err := c.Clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the log of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return string(raw), nil
}
