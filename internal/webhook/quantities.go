package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// quantityChecker refuses an App whose resource quantities do not parse, naming each field,
// before the wrapped handler decodes it. Mutating webhooks run before the API server's schema
// validation, and a quantity that does not decode would otherwise fail with a message that
// names no field.
type quantityChecker struct {
	next admission.Handler
}

func (q quantityChecker) Handle(ctx context.Context, req admission.Request) admission.Response {
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Resources map[string]map[string]any `json:"resources"`
			Env       []struct {
				ValueFrom struct {
					ResourceFieldRef struct {
						Divisor any `json:"divisor"`
					} `json:"resourceFieldRef"`
				} `json:"valueFrom"`
			} `json:"env"`
		} `json:"spec"`
	}
	if json.Unmarshal(req.Object.Raw, &obj) != nil {
		return q.next.Handle(ctx, req) // not this check's to report
	}
	var errs field.ErrorList
	resources := field.NewPath("spec", "resources")
	for _, kind := range []string{"requests", "limits"} {
		for name, v := range obj.Spec.Resources[kind] {
			errs = append(errs, quantity(v, resources.Child(kind).Key(name))...)
		}
	}
	for i, e := range obj.Spec.Env {
		if d := e.ValueFrom.ResourceFieldRef.Divisor; d != nil {
			errs = append(errs, quantity(d, field.NewPath("spec", "env").Index(i).Child("valueFrom", "resourceFieldRef", "divisor"))...)
		}
	}
	if len(errs) == 0 {
		return q.next.Handle(ctx, req)
	}
	status := appv1.Invalid(obj.Metadata.Name, errs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

func quantity(v any, path *field.Path) field.ErrorList {
	s := fmt.Sprint(v)
	if _, err := resource.ParseQuantity(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, "not a quantity, such as 500m, 2 or 1Gi: "+err.Error())}
	}
	return nil
}
