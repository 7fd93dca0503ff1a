package controllers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/internal/envtest"
)

func newApp(ns, name string) *appv1.App {
	return &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appv1.AppSpec{
			Image:    "registry.example.com/web:1.0",
			Replicas: ptr.To(int32(2)),
			Ports:    []appv1.AppPort{{Name: "http", ContainerPort: 8080}},
			Env:      []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
		},
	}
}

func key(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// get reads an object by the App's name into obj.
func get(c *require.Assertions, app *appv1.App, obj client.Object) {
	c.NoError(env.Client.Get(context.Background(), key(app), obj))
}

func absent(c *require.Assertions, app *appv1.App, obj client.Object) {
	err := env.Client.Get(context.Background(), key(app), obj)
	c.Truef(apierrors.IsNotFound(err), "%T %s should not exist, got err=%v", obj, key(app), err)
}

func TestCreatingAnAppCreatesItsDeploymentAndService(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))

	envtest.Eventually(t, func(c *require.Assertions) {
		var d appsv1.Deployment
		get(c, app, &d)
		c.True(metav1.IsControlledBy(&d, app), "the Deployment is controlled by the App")
		c.Equal(int32(2), *d.Spec.Replicas)
		c.Equal(desired.SelectorLabels(app), d.Spec.Selector.MatchLabels)
		ctr := d.Spec.Template.Spec.Containers[0]
		c.Equal("registry.example.com/web:1.0", ctr.Image)
		c.Equal([]corev1.EnvVar{{Name: "MODE", Value: "prod"}}, ctr.Env)
		c.Equal(int32(8080), ctr.Ports[0].ContainerPort)
		c.True(*d.Spec.Template.Spec.SecurityContext.RunAsNonRoot, "restricted security defaults")
		c.Equal(appv1.ManagedByValue, d.Labels[appv1.LabelManagedBy])

		var svc corev1.Service
		get(c, app, &svc)
		c.True(metav1.IsControlledBy(&svc, app), "the Service is controlled by the App")
		c.Equal(corev1.ServiceTypeClusterIP, svc.Spec.Type)
		c.Equal(int32(80), svc.Spec.Ports[0].Port)
		c.Equal(intstr.FromString("http"), svc.Spec.Ports[0].TargetPort)
		c.Equal(desired.SelectorLabels(app), svc.Spec.Selector)

		absent(c, app, &autoscalingv2.HorizontalPodAutoscaler{})
		absent(c, app, &policyv1.PodDisruptionBudget{})
	})
}

func TestAppChangesPropagateToChildren(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))
	envtest.Eventually(t, func(c *require.Assertions) { get(c, app, &corev1.Service{}) })

	env.Update(t, app, func() {
		app.Spec.Image = "registry.example.com/web:2.0"
		app.Spec.Env = nil
		app.Spec.Service.Enabled = ptr.To(false)
		app.Spec.Autoscaling = &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 5}
		app.Spec.DisruptionBudget = &appv1.DisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	})

	envtest.Eventually(t, func(c *require.Assertions) {
		var d appsv1.Deployment
		get(c, app, &d)
		ctr := d.Spec.Template.Spec.Containers[0]
		c.Equal("registry.example.com/web:2.0", ctr.Image)
		c.Empty(ctr.Env, "an env var removed from the App is removed from the Deployment")
		absent(c, app, &corev1.Service{})

		var hpa autoscalingv2.HorizontalPodAutoscaler
		get(c, app, &hpa)
		c.Equal(int32(5), hpa.Spec.MaxReplicas)
		c.Equal("web", hpa.Spec.ScaleTargetRef.Name)
		var pdb policyv1.PodDisruptionBudget
		get(c, app, &pdb)
		c.Equal(intstr.FromInt32(1), *pdb.Spec.MaxUnavailable)
	})

	// Autoscaling removed: the HorizontalPodAutoscaler goes, the App owns replicas again.
	env.Update(t, app, func() {
		app.Spec.Autoscaling = nil
		app.Spec.Replicas = ptr.To(int32(3))
	})
	envtest.Eventually(t, func(c *require.Assertions) {
		absent(c, app, &autoscalingv2.HorizontalPodAutoscaler{})
		var d appsv1.Deployment
		get(c, app, &d)
		c.Equal(int32(3), *d.Spec.Replicas)
	})
}

func TestDriftOnChildrenIsReverted(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))
	var d appsv1.Deployment
	var svc corev1.Service
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, &d)
		get(c, app, &svc)
	})

	env.Update(t, &d, func() {
		d.Spec.Replicas = ptr.To(int32(7))
		d.Spec.Template.Spec.Containers[0].Image = "registry.example.com/hijacked:1"
	})
	env.Update(t, &svc, func() { svc.Spec.Ports[0].Port = 9999 })

	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, &d)
		c.Equal(int32(2), *d.Spec.Replicas)
		c.Equal("registry.example.com/web:1.0", d.Spec.Template.Spec.Containers[0].Image)
		get(c, app, &svc)
		c.Equal(int32(80), svc.Spec.Ports[0].Port)
		// The App and its Events report what was healed.
		get(c, app, app)
		c.NotNil(app.Status.Healed)
		c.Contains(strings.Join(eventMessages(t, app, controllers.ReasonHealed), "\n"), "reverted a change to Deployment web")
	})
	healed := app.Status.Healed.Count
	require.Positive(t, healed)

	// A deleted child comes back, and the App and an Event say so.
	require.NoError(t, env.Client.Delete(ctx, &svc))
	envtest.Eventually(t, func(c *require.Assertions) {
		var again corev1.Service
		get(c, app, &again)
		c.NotEqual(svc.UID, again.UID)
		get(c, app, app)
		// Later than what the count was read after the reverts: the status write of the
		// reconcile that reverted the Service may have come after that read.
		c.Greater(app.Status.Healed.Count, healed)
		c.Equal("recreated Service web, which was missing", app.Status.Healed.Last)
		c.Contains(eventMessages(t, app, controllers.ReasonHealed), "recreated Service web, which was missing")
	})
}

// eventMessages lists the messages of the App's Events of a reason.
func eventMessages(t *testing.T, app *appv1.App, reason string) []string {
	return notes(appEvents(t, app, reason))
}

// notes are the messages of Events.
func notes(events []eventsv1.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Note)
	}
	return out
}

// appEvents returns the App's Events with reason.
func appEvents(t *testing.T, app *appv1.App, reason string) []eventsv1.Event {
	events := &eventsv1.EventList{}
	require.NoError(t, env.Client.List(context.Background(), events, client.InNamespace(app.Namespace)))
	var out []eventsv1.Event
	for _, e := range events.Items {
		if e.Regarding.Name == app.Name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func TestStatusFollowsTheDeployment(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))

	var d appsv1.Deployment
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, &d)
		get(c, app, app)
		available := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionAvailable)
		c.NotNil(available)
		c.Equal(metav1.ConditionFalse, available.Status)
		c.Equal(appv1.ReasonReplicasUnavailable, available.Reason)
		c.Equal(app.Generation, app.Status.ObservedGeneration)
		c.Equal("web", app.Status.ServiceName)
		c.Equal("app.kubernetes.io/instance=web,app.kubernetes.io/managed-by=app-operator", app.Status.Selector)
	})

	// Play the Deployment controller: the rollout completes.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(require.New(t), app, &d)
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		}
		return env.Client.Status().Update(ctx, &d)
	}))

	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Equal(int32(2), app.Status.AvailableReplicas)
		c.Equal(int32(2), app.Status.ReadyReplicas)
		c.Equal("registry.example.com/web:1.0", app.Status.Image)
		c.True(meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable))
		c.True(meta.IsStatusConditionFalse(app.Status.Conditions, appv1.ConditionProgressing))
		c.True(meta.IsStatusConditionFalse(app.Status.Conditions, appv1.ConditionDegraded))
	})

	// The rollout stalls past its deadline: the App is Degraded.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(require.New(t), app, &d)
		d.Status.Conditions = []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
		}}
		return env.Client.Status().Update(ctx, &d)
	}))
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		degraded := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
		c.Equal(metav1.ConditionTrue, degraded.Status)
		c.Equal(appv1.ReasonProgressDeadlineExceeded, degraded.Reason)
	})
}

func TestAConvergedAppCostsNoWrites(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	app.Spec.Autoscaling = &appv1.AutoscalingSpec{MaxReplicas: 3}
	app.Spec.DisruptionBudget = &appv1.DisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))}
	require.NoError(t, env.Client.Create(ctx, app))

	var d appsv1.Deployment
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, &d)
		get(c, app, &autoscalingv2.HorizontalPodAutoscaler{})
		get(c, app, &policyv1.PodDisruptionBudget{})
		get(c, app, app)
		c.Equal(app.Generation, app.Status.ObservedGeneration)
	})
	versions := func() []string {
		c := require.New(t)
		objs := []client.Object{&appv1.App{}, &appsv1.Deployment{}, &corev1.Service{},
			&autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{}}
		var rvs []string
		for _, o := range objs {
			get(c, app, o)
			rvs = append(rvs, o.GetResourceVersion())
		}
		return rvs
	}
	envtest.WaitIdle(t)

	// The cache keeps each child without its spec, and its hashes show it is as applied: the
	// fields the operator owns on the API server hash to the configuration it applied. So does
	// the cache of a manager that starts now, which lists the children rather than watching
	// them come.
	for name, cache := range map[string]client.Reader{"running": env.Cache, "new": env.NewCache(t)} {
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{}} {
			require.NoError(t, cache.Get(ctx, key(app), o))
			applied := o.GetAnnotations()[apply.HashAnnotation]
			require.NotEmpty(t, applied, "%s cache: %T", name, o)
			require.Equal(t, applied, o.GetAnnotations()[apply.OwnedHashAnnotation], "%s cache: %T: the owned fields hash as applied", name, o)
		}
		cached := &appsv1.Deployment{}
		require.NoError(t, cache.Get(ctx, key(app), cached))
		require.Empty(t, cached.Spec.Template.Spec.Containers[0].Env, "%s cache: no pod template", name)
		require.Equal(t, desired.TemplateHash(&d.Spec.Template), desired.DeploymentTemplateHash(cached), "%s cache: the template's hash", name)
	}

	// Touch the App without changing its spec: the operator reconciles it and writes nothing.
	before, rvs, reconciles := env.Writes.Load(), versions(), envtest.Reconciles()
	env.Update(t, app, func() { app.Labels = map[string]string{"touched": "yes"} })
	rvs[0] = app.ResourceVersion
	envtest.WaitForReconciles(t, reconciles, 1)
	require.Equal(t, before, env.Writes.Load(), "a converged reconcile makes no API write")
	require.Equal(t, rvs, versions(), "no resourceVersion changed")
}
