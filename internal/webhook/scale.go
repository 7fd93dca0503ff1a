package webhook

import (
	"context"
	"encoding/json"

	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// scaleGuard refuses a change of an App's replica count through its scale subresource
// (kubectl scale) while spec.autoscaling is set: the App's HorizontalPodAutoscaler owns the
// count then, and the change would do nothing. A write of spec.replicas itself is admitted,
// with a warning (appv1.Warnings), so that manifests holding both fields still apply.
//
// It fails open: when the App cannot be read, or the webhook cannot be called, the change is
// admitted and does nothing, as it would without the guard.
type scaleGuard struct {
	Reader client.Reader
}

// +kubebuilder:webhook:path=/validate-mycompany-com-v1-app-scale,mutating=false,failurePolicy=ignore,sideEffects=None,groups=mycompany.com,resources=apps/scale,verbs=update,versions=v1,name=vapp-scale.mycompany.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// scalePath is where the guard is served (see the marker above).
const scalePath = "/validate-mycompany-com-v1-app-scale"

func (g scaleGuard) Handle(ctx context.Context, req admission.Request) admission.Response {
	var scale, old autoscalingv1.Scale
	if json.Unmarshal(req.Object.Raw, &scale) != nil || json.Unmarshal(req.OldObject.Raw, &old) != nil ||
		scale.Spec.Replicas == old.Spec.Replicas {
		return admission.Allowed("")
	}
	app := &appv1.App{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, app); err != nil {
		return admission.Allowed("").WithWarnings("could not check whether the App is autoscaled: " + err.Error())
	}
	if app.Spec.Autoscaling == nil {
		return admission.Allowed("")
	}
	refused := appv1.Invalid(app.Name, field.ErrorList{field.Forbidden(field.NewPath("spec", "replicas"),
		"spec.autoscaling is set, so the App's HorizontalPodAutoscaler owns the replica count: change spec.autoscaling.minReplicas or spec.autoscaling.maxReplicas instead")}).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &refused}}
}
