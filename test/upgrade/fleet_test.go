package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/test/localcluster"
)

// fleetNamespace holds the Apps a scenario upgrades.
const fleetNamespace = "fleet"

// sampleImage is the sample workload, which the real node pulls from the cluster's registry.
const sampleImage = "quay.io/mycompany/app-operator-sample:v1.0.0"

// fleet says how a scenario's Apps are made.
type fleet struct {
	// real is how many Apps, every other one from the first, run one pod of the sample
	// workload on the real node. They are made with the flat fields of v1alpha1 only, through
	// v1alpha1 where the release serves it. The others are made through v1, with fields only
	// v1 holds, and run on kwok's fake nodes, as a workload at scale does.
	real int
	// legacy says the release serves v1alpha1.
	legacy bool
}

// createFleet creates n Apps as f says and waits until every one is Available.
func (e *env) createFleet(t *testing.T, n int, f fleet) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.IgnoreAlreadyExists(e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNamespace}})))
	for i := range n {
		var obj client.Object
		onNode := metav1.ObjectMeta{Namespace: fleetNamespace, Name: fmt.Sprintf("real-%03d", i)}
		switch {
		case i%2 == 0 && i/2 < f.real && f.legacy:
			obj = localcluster.LegacyApp(onNode, sampleImage, 1)
		case i%2 == 0 && i/2 < f.real:
			obj = &appv1.App{ObjectMeta: onNode, Spec: appv1.AppSpec{Image: sampleImage, Replicas: ptr.To(int32(1))}}
		default:
			app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace, Name: fmt.Sprintf("v1-%03d", i)},
				Spec: appv1.AppSpec{
					Image: "registry.example.com/fleet/web:1.27", Replicas: ptr.To(int32(1 + i%2)),
					Args:             []string{"--worker", fmt.Sprint(i)},
					Env:              []corev1.EnvVar{{Name: "INDEX", Value: fmt.Sprint(i)}},
					PodLabels:        map[string]string{"team": "fleet"},
					DisruptionBudget: &appv1.DisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
					Rollout:          &appv1.RolloutSpec{MaxSurge: ptr.To(intstr.FromString("50%"))},
				}}
			localcluster.OnFakeNodes(&app.Spec)
			obj = app
		}
		require.NoError(t, e.Client.Create(ctx, obj))
	}
	e.waitFleetAvailable(t)
}

// waitFleetAvailable waits until every App of the fleet is Available and its rollout is over:
// it has as many pods as replicas, none of them terminating, so that a snapshot holds the
// settled workload and not a pod that a finished rollout is still removing.
func (e *env) waitFleetAvailable(t *testing.T) {
	t.Helper()
	require.NoError(t, e.Poll(context.Background(), 3*time.Minute, "every App of the fleet to be Available with its rollout over", func(ctx context.Context) (bool, error) {
		apps, pods, err := e.fleetWithPods(ctx)
		if err != nil {
			return false, err
		}
		for _, a := range apps {
			if a.Status.ObservedGeneration != a.Generation || !meta.IsStatusConditionTrue(a.Status.Conditions, appv1.ConditionAvailable) ||
				a.Status.AvailableReplicas != *a.Spec.Replicas {
				return false, fmt.Errorf("App %s: %+v", a.Name, a.Status)
			}
			if n := len(pods[a.Name]); n != int(*a.Spec.Replicas) {
				return false, fmt.Errorf("App %s: %d pods for %d replicas", a.Name, n, *a.Spec.Replicas)
			}
		}
		return len(apps) > 0, nil
	}))
}

// fleetWithPods lists the fleet's Apps, and the pods of each by its name, terminating ones
// included: two lists, whatever the size of the fleet.
func (e *env) fleetWithPods(ctx context.Context) ([]appv1.App, map[string][]corev1.Pod, error) {
	apps := &appv1.AppList{}
	if err := e.Client.List(ctx, apps, client.InNamespace(fleetNamespace)); err != nil {
		return nil, nil, err
	}
	all := &corev1.PodList{}
	if err := e.Client.List(ctx, all, client.InNamespace(fleetNamespace)); err != nil {
		return nil, nil, err
	}
	pods := map[string][]corev1.Pod{}
	for _, a := range apps.Items {
		selector := labels.SelectorFromSet(desired.SelectorLabels(&a))
		for _, p := range all.Items {
			if selector.Matches(labels.Set(p.Labels)) {
				pods[a.Name] = append(pods[a.Name], p)
			}
		}
	}
	return apps.Items, pods, nil
}

// createApp creates one more App in the fleet's namespace and waits until it is Available.
func (e *env) createApp(t *testing.T, name string) {
	t.Helper()
	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace, Name: name},
		Spec: appv1.AppSpec{Image: "registry.example.com/fleet/web:1.27", Replicas: ptr.To(int32(2))}}
	localcluster.OnFakeNodes(&app.Spec)
	require.NoError(t, e.Client.Create(context.Background(), app))
	require.NoError(t, e.WaitForAppAvailable(context.Background(), client.ObjectKeyFromObject(app), 2*time.Minute))
}

// fleetApp reads one App of the fleet as v1.
func (e *env) fleetApp(t *testing.T, name string) *appv1.App {
	t.Helper()
	app := &appv1.App{}
	require.NoError(t, e.Client.Get(context.Background(), client.ObjectKey{Namespace: fleetNamespace, Name: name}, app))
	return app
}

// fleetState is what must not change across an upgrade: each App's spec read as v1, and its
// workload: the Deployment's generation and pod template, and the pods themselves, with the
// restarts of their containers.
type fleetState map[string]string

func (e *env) snapshot(t *testing.T) fleetState {
	t.Helper()
	ctx := context.Background()
	apps, pods, err := e.fleetWithPods(ctx)
	require.NoError(t, err)
	deployments := &appsv1.DeploymentList{}
	require.NoError(t, e.Client.List(ctx, deployments, client.InNamespace(fleetNamespace)))
	byName := map[string]*appsv1.Deployment{}
	for i := range deployments.Items {
		byName[deployments.Items[i].Name] = &deployments.Items[i]
	}
	s := fleetState{}
	for _, a := range apps {
		spec, err := json.Marshal(a.Spec)
		require.NoError(t, err)
		d, ok := byName[a.Name]
		require.True(t, ok, "the Deployment of App %s", a.Name)
		template, err := json.Marshal(d.Spec.Template)
		require.NoError(t, err)
		var uids []string
		for _, p := range pods[a.Name] {
			restarts := int32(0)
			for _, c := range p.Status.ContainerStatuses {
				restarts += c.RestartCount
			}
			uids = append(uids, fmt.Sprintf("%s/%s/restarts=%d", p.UID, p.Spec.NodeName, restarts))
		}
		sort.Strings(uids)
		s[a.Name] = fmt.Sprintf("spec=%s deployment-generation=%d template=%x pods=%s",
			spec, d.Generation, sha256.Sum256(template), strings.Join(uids, ","))
	}
	return s
}

// assertFleetUnchanged checks that every App is Available and that neither its spec nor its
// workload changed: no pod restarted.
func (e *env) assertFleetUnchanged(t *testing.T, before fleetState) {
	t.Helper()
	e.waitFleetAvailable(t)
	after := e.snapshot(t)
	require.Len(t, after, len(before), "no App is lost")
	for name, was := range before {
		require.Equal(t, was, after[name], "App %s", name)
	}
}
