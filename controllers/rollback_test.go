package controllers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/internal/envtest"
)

// deploymentController plays the Deployment controller, which envtest does not run, for one
// App's Deployment.
type deploymentController struct {
	t   *testing.T
	app *appv1.App
}

// complete reports the Deployment's current template as rolled out, and keeps a ReplicaSet of
// it, as the Deployment controller would.
func (dc deploymentController) complete(hash string) *appsv1.Deployment {
	d := dc.setStatus(func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	})
	template := d.Spec.Template.DeepCopy()
	template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-" + hash, Labels: template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(2)), Template: *template,
			Selector: &metav1.LabelSelector{MatchLabels: template.Labels}},
	}
	require.NoError(dc.t, env.Client.Create(context.Background(), rs))
	return d
}

// stall reports the Deployment's current template as stuck past its progress deadline, with
// one new pod that never became available.
func (dc deploymentController) stall() {
	dc.setStatus(func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}
	})
}

func (dc deploymentController) setStatus(set func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	envtest.Eventually(dc.t, func(c *require.Assertions) { get(c, dc.app, d) })
	require.NoError(dc.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(require.New(dc.t), dc.app, d)
		set(d)
		return env.Client.Status().Update(context.Background(), d)
	}))
	return d
}

// deploymentImage waits until the Deployment runs image, and returns it.
func deploymentImage(t *testing.T, app *appv1.App, image string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, d)
		c.Equal(image, d.Spec.Template.Spec.Containers[0].Image)
	})
	return d
}

func rolledBackEvents(t *testing.T, app *appv1.App) int {
	return len(eventMessages(t, app, appv1.ReasonRolledBack))
}

func TestAFailedRolloutIsRolledBackOnce(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))
	dc := deploymentController{t, app}

	good := dc.complete("good")
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.NotNil(app.Status.Rollout)
		c.Equal(desired.TemplateHash(&good.Spec.Template), app.Status.Rollout.AvailableTemplate, "the completed template is recorded")
	})

	env.Update(t, app, func() { app.Spec.Image = "registry.example.com/web:2.0" })
	deploymentImage(t, app, "registry.example.com/web:2.0")
	dc.stall()

	restored := deploymentImage(t, app, "registry.example.com/web:1.0")
	require.Equal(t, good.Spec.Template, restored.Spec.Template, "the last available template, without the ReplicaSet's label")
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.NotNil(app.Status.Rollout.RolledBack)
		c.Equal("registry.example.com/web:2.0", app.Status.Rollout.RolledBack.Image)
		degraded := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
		c.Equal(appv1.ReasonRolledBack, degraded.Reason)
		c.Contains(degraded.Message, "registry.example.com/web:2.0", "the message names the image that failed")
		c.True(meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionStalled))
		c.Equal(1, rolledBackEvents(t, app))
	})

	// The old pods are back: the App is Available and says it runs the old image.
	dc.setStatus(func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	})
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Equal("registry.example.com/web:1.0", app.Status.Image)
		c.True(meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable))
		progressing := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionProgressing)
		c.Equal(metav1.ConditionFalse, progressing.Status)
		c.Equal(appv1.ReasonRolledBack, progressing.Reason)
	})

	// A change that leaves the pod template alone does not try the failed template again.
	env.Update(t, app, func() { app.Spec.Replicas = ptr.To(int32(3)) })
	envtest.Eventually(t, func(c *require.Assertions) {
		d := &appsv1.Deployment{}
		get(c, app, d)
		c.Equal(int32(3), *d.Spec.Replicas)
		c.Equal("registry.example.com/web:1.0", d.Spec.Template.Spec.Containers[0].Image)
	})
	require.Equal(t, 1, rolledBackEvents(t, app), "one rollback, one Event")

	// A new template is rolled out, and the rollback is forgotten.
	env.Update(t, app, func() { app.Spec.Image = "registry.example.com/web:3.0" })
	deploymentImage(t, app, "registry.example.com/web:3.0")
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Nil(app.Status.Rollout.RolledBack)
		c.Equal(appv1.ReasonAsExpected, meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded).Reason)
	})
}

func TestAutoRollbackFalseLeavesAFailedRolloutAlone(t *testing.T) {
	app, dc := rolledOutApp(t, &appv1.RolloutSpec{AutoRollback: ptr.To(false)})
	stuckRollout(t, app, dc)
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Equal(appv1.ReasonProgressDeadlineExceeded, meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded).Reason)
	})
	envtest.WaitIdle(t)
	get(require.New(t), app, app)
	require.Nil(t, app.Status.Rollout.RolledBack)
	deploymentImage(t, app, "registry.example.com/web:2.0")
	require.Zero(t, rolledBackEvents(t, app))
}

func TestARollbackWithNothingToRestoreNamesTheWayOut(t *testing.T) {
	app, dc := rolledOutApp(t, nil)
	// Someone deletes the ReplicaSet of the good template.
	require.NoError(t, env.Client.DeleteAllOf(context.Background(), &appsv1.ReplicaSet{}, client.InNamespace(app.Namespace)))
	stuckRollout(t, app, dc)
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		stalled := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionStalled)
		c.Equal(metav1.ConditionTrue, stalled.Status)
		c.Contains(stalled.Message, "none of its ReplicaSets holds the last pod template that was fully available")
	})
	deploymentImage(t, app, "registry.example.com/web:2.0")
}

// rolledOutApp creates an App whose first rollout completed and was recorded.
func rolledOutApp(t *testing.T, rollout *appv1.RolloutSpec) (*appv1.App, deploymentController) {
	app := newApp(env.Namespace(t), "web")
	app.Spec.Rollout = rollout
	require.NoError(t, env.Client.Create(context.Background(), app))
	dc := deploymentController{t, app}
	dc.complete("good")
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.NotNil(app.Status.Rollout)
	})
	return app, dc
}

// stuckRollout rolls the App out to a new image that gets stuck past its progress deadline.
func stuckRollout(t *testing.T, app *appv1.App, dc deploymentController) {
	env.Update(t, app, func() { app.Spec.Image = "registry.example.com/web:2.0" })
	deploymentImage(t, app, "registry.example.com/web:2.0")
	dc.stall()
}
