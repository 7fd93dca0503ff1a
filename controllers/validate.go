package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// ReasonInvalid is the reason of the Event of a reconcile that found the App invalid.
const ReasonInvalid = "Invalid"

// validate checks the App as admission does, defaulted first, and returns the API's refusal
// naming every field at fault. The webhooks refuse such an App; one stored while no webhook
// served its namespace (an install for some namespaces, widened since) was not checked.
func validate(app *appv1.App) error {
	defaulted := app.DeepCopy()
	appv1.SetDefaults(defaulted)
	if errs := appv1.Validate(defaulted); len(errs) > 0 {
		return appv1.Invalid(app.Name, errs)
	}
	return nil
}

// reported says whether the App's status already stalls on err at its generation: its Event
// was emitted by the reconcile that wrote it, and the ones that follow (the reconcile its
// status write brings, a resync) are quiet.
func reported(app *appv1.App, err error) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == app.Generation && c.Message == err.Error()
}
