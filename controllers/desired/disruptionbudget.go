package desired

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// PodDisruptionBudget builds the disruption budget of a defaulted App's pods, or returns nil
// when the App asks for none.
func PodDisruptionBudget(app *appv1.App) *policyv1.PodDisruptionBudget {
	b := app.Spec.DisruptionBudget
	if b == nil {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(app),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: SelectorLabels(app)},
			MinAvailable:   b.MinAvailable,
			MaxUnavailable: b.MaxUnavailable,
		},
	}
}
