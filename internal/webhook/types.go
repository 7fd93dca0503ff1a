package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// typeChecker explains a request the wrapped handler could not decode. Mutating webhooks run
// before the API server's schema validation, so a value of the wrong type ("three" replicas)
// or too large for its field reaches the defaulter first, whose decoder names no field. When
// the handler refuses a request as malformed, typeChecker validates the object against the
// App CRD's schema as the API server serves it, and refuses with the schema's 422 naming each
// field, as the API server itself would have.
type typeChecker struct {
	next admission.Handler
	// Reader reads the App CRD.
	Reader client.Reader
}

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=apps.mycompany.com,verbs=get

func (c typeChecker) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp := c.next.Handle(ctx, req)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusBadRequest {
		return resp
	}
	var obj map[string]any
	if json.Unmarshal(req.Object.Raw, &obj) != nil {
		return resp // not JSON at all: the decoder's message is the right one
	}
	errs, err := c.schemaErrors(ctx, req.Kind.Version, obj)
	if err != nil || len(errs) == 0 {
		return resp
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	status := appv1.Invalid(name, errs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// schemaErrors validates obj against the served schema of version, as the API server does.
func (c typeChecker) schemaErrors(ctx context.Context, version string, obj map[string]any) (field.ErrorList, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Name: "apps." + appv1.GroupVersion.Group}, crd); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, err
		}
		validator, _, err := schemavalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil, err
		}
		errs := schemavalidation.ValidateCustomResource(nil, obj, validator)
		for _, e := range errs {
			nameField(e)
		}
		return errs, nil
	}
	return nil, fmt.Errorf("the App CRD serves no schema for %s", version)
}

// nameField gives the field its name where the schema's validator leaves it in the message,
// as its range check of an int32 or int64 field does: "Checked value must be of type integer
// with format int32 in spec.replicas".
func nameField(e *field.Error) {
	if e.Field != "<nil>" && e.Field != "" {
		return
	}
	detail, path, found := strings.Cut(e.Detail, " in ")
	if !found {
		return
	}
	e.Field, e.BadValue = path, field.OmitValueType{}
	e.Detail = strings.TrimPrefix(detail, "Checked value ")
}
