package status

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

// rolloutRecord is the App's status.rollout: the template of its last completed rollout, and
// the rollback of a rollout that made no progress within its deadline. The rollback is
// decided here, recorded by the status write, and carried out by the next reconcile, which
// reads the record: a restart in between still rolls back, and only once.
func rolloutRecord(app *appv1.App, d *appsv1.Deployment, r rolloutState, specTemplate string, now metav1.Time) *appv1.RolloutStatus {
	rec := appv1.RolloutStatus{}
	if app.Status.Rollout != nil {
		rec = *app.Status.Rollout.DeepCopy()
	}
	if rolledBack(app, &rec, specTemplate) == nil {
		// The App asks for another template now, or for no rollbacks at all.
		rec.RolledBack = nil
	}
	// The Deployment's template is hashed only where it counts: a completed rollout, or a stuck
	// one that may be rolled back.
	switch {
	case d == nil:
	case r.complete:
		rec.AvailableTemplate = desired.DeploymentTemplateHash(d)
	case r.observed && r.deadlineExceeded && rec.RolledBack == nil && app.Spec.AutoRollbackEnabled() &&
		rec.AvailableTemplate != "" && desired.DeploymentTemplateHash(d) != rec.AvailableTemplate:
		rec.RolledBack = &appv1.RolledBack{Template: specTemplate, Image: imageOf(d), Time: now}
	}
	if rec == (appv1.RolloutStatus{}) {
		return nil
	}
	return &rec
}

// RolledBack returns the App's rollback while it holds: the template the App's spec asks for
// (specTemplate, by desired.TemplateHash) is the one that failed, and rollbacks are enabled.
// The reconciler then applies the last available template instead.
func RolledBack(app *appv1.App, specTemplate string) *appv1.RolledBack {
	if app.Status.Rollout == nil {
		return nil
	}
	return rolledBack(app, app.Status.Rollout, specTemplate)
}

func rolledBack(app *appv1.App, rec *appv1.RolloutStatus, specTemplate string) *appv1.RolledBack {
	if rb := rec.RolledBack; rb != nil && rb.Template == specTemplate && app.Spec.AutoRollbackEnabled() {
		return rb
	}
	return nil
}
