package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/controllers/status"
)

// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list

// holdRollback gives the desired Deployment the last pod template that was fully available,
// while the App's rollout stands rolled back (see status.RolledBack): the template its spec
// asks for failed, and is not applied again until the spec asks for another. The template
// comes from the Deployment itself once it is restored, and before that from the
// Deployment's ReplicaSet of that template. Both are read past the cache, which keeps no
// ReplicaSets and no pod templates: rollbacks are rare.
func (r *AppReconciler) holdRollback(ctx context.Context, app *appv1.App, d *appsv1.Deployment, specTemplate string) error {
	if status.RolledBack(app, specTemplate) == nil {
		return nil
	}
	available := app.Status.Rollout.AvailableTemplate
	current := &appsv1.Deployment{}
	err := r.Reader.Get(ctx, client.ObjectKeyFromObject(d), current)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading Deployment %s: %w", client.ObjectKeyFromObject(d), err)
	}
	if err == nil && desired.TemplateHash(&current.Spec.Template) == available {
		d.Spec.Template = current.Spec.Template
		return nil
	}
	sets := &appsv1.ReplicaSetList{}
	if err := r.Reader.List(ctx, sets, client.InNamespace(app.Namespace), client.MatchingLabels(desired.SelectorLabels(app))); err != nil {
		return fmt.Errorf("listing the ReplicaSets of Deployment %s to roll back: %w", client.ObjectKeyFromObject(d), err)
	}
	for i := range sets.Items {
		rs := &sets.Items[i]
		owner := metav1.GetControllerOf(rs)
		if owner != nil && owner.Kind == "Deployment" && owner.Name == d.Name && desired.TemplateHash(&rs.Spec.Template) == available {
			d.Spec.Template = *desired.WithoutReplicaSetLabel(&rs.Spec.Template)
			return nil
		}
	}
	return &NoRollbackTargetError{Deployment: client.ObjectKeyFromObject(d)}
}

// NoRollbackTargetError reports a rollback that cannot be carried out: no ReplicaSet of the
// Deployment holds the last pod template that was fully available any more.
type NoRollbackTargetError struct {
	Deployment client.ObjectKey
}

func (e *NoRollbackTargetError) Error() string {
	return fmt.Sprintf("cannot roll back Deployment %s: none of its ReplicaSets holds the last pod template that was fully available; change the App's pod template", e.Deployment)
}

// reportRollback emits an Event when a status write records a new rollback.
func (r *AppReconciler) reportRollback(app *appv1.App, before *appv1.RolloutStatus) {
	after := app.Status.Rollout
	if after == nil || after.RolledBack == nil || (before != nil && before.RolledBack != nil && before.RolledBack.Template == after.RolledBack.Template) {
		return
	}
	r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, appv1.ReasonRolledBack, "Rollback",
		"the rollout of image %s made no progress within its deadline; restoring the last pod template that was fully available (image %s)",
		after.RolledBack.Image, app.Status.Image)
}
