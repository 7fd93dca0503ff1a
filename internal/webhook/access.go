package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// An App runs pods with the operator's rights, not its author's. So that nobody gets through
// an App what they could not do themselves, the validating webhook asks the API server, with a
// SubjectAccessReview, whether the requester may do what the App makes the operator do.

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// access is one permission an App's change needs from its requester, and the field that
// needs it.
type access struct {
	field *field.Path
	attrs authorizationv1.ResourceAttributes
}

// UseVerb is the verb on a ServiceAccount that lets an App's pods run as it.
const UseVerb = "use"

// defaultServiceAccount runs an App's pods when spec.serviceAccountName is empty; anyone who
// may run pods in a namespace runs them as it, so using it needs no grant.
const defaultServiceAccount = "default"

// requiredAccess lists what the requester of a change to an App must be allowed: to create
// (or update) the Deployment the App becomes, and to use the ServiceAccount its pods run as.
// A change that leaves the spec as it was needs nothing: the pods stay as they are.
func requiredAccess(op admissionv1.Operation, old, app *appv1.App) []access {
	verb := "create"
	if op == admissionv1.Update {
		if specUnchanged(old, app) {
			return nil
		}
		verb = "update"
	}
	need := []access{{
		field: field.NewPath("spec"),
		attrs: authorizationv1.ResourceAttributes{Namespace: app.Namespace, Verb: verb, Group: "apps", Resource: "deployments"},
	}}
	if sa := app.Spec.ServiceAccountName; sa != "" && sa != defaultServiceAccount {
		need = append(need, access{
			field: field.NewPath("spec", "serviceAccountName"),
			attrs: authorizationv1.ResourceAttributes{Namespace: app.Namespace, Verb: UseVerb, Resource: "serviceaccounts", Name: sa},
		})
	}
	return need
}

// specUnchanged says whether an update leaves the App's spec as it was, defaults aside: the
// defaulting webhook fills them in on the first update of an App stored without it.
func specUnchanged(old, app *appv1.App) bool {
	if old == nil {
		return false
	}
	was := old.DeepCopy()
	appv1.SetDefaults(was)
	return equality.Semantic.DeepEqual(was.Spec, app.Spec)
}

// authorize asks the API server whether user has every access, and refuses with a 403 naming
// each field whose permission is missing.
func authorize(ctx context.Context, c client.Client, user authenticationv1.UserInfo, app *appv1.App, need []access) error {
	var errs field.ErrorList
	for _, a := range need {
		attrs := a.attrs
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &attrs, User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra(user.Extra),
		}}
		if err := c.Create(ctx, review); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("asking whether %q may %s: %w", user.Username, describe(attrs), err))
		}
		if !review.Status.Allowed {
			errs = append(errs, field.Forbidden(a.field, fmt.Sprintf("%q may not %s, which this App would do with the operator's rights", user.Username, describe(attrs))))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewForbidden(appv1.GroupVersion.WithResource("apps").GroupResource(), app.Name, errs.ToAggregate())
}

// describe is a permission as a sentence: "create deployments.apps in namespace shop".
func describe(a authorizationv1.ResourceAttributes) string {
	resource := a.Resource
	if a.Group != "" {
		resource += "." + a.Group
	}
	if a.Name != "" {
		resource += " " + a.Name
	}
	return fmt.Sprintf("%s %s in namespace %s", a.Verb, resource, a.Namespace)
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if in == nil {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}
