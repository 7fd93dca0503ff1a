// Package webhook serves App Operator's admission webhooks on v1, the App API's one version.
package webhook

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// +kubebuilder:webhook:path=/mutate-mycompany-com-v1-app,mutating=true,failurePolicy=fail,sideEffects=None,groups=mycompany.com,resources=apps,verbs=create;update,versions=v1,name=mapp.mycompany.com,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-mycompany-com-v1-app,mutating=false,failurePolicy=fail,sideEffects=None,groups=mycompany.com,resources=apps,verbs=create;update,versions=v1,name=vapp.mycompany.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// AppWebhook defaults and validates Apps.
type AppWebhook struct {
	// Client asks the API server whether the requester of a change may do what the App would
	// do; see access.go.
	Client client.Client
}

var (
	_ admission.Defaulter[*appv1.App] = AppWebhook{}
	_ admission.Validator[*appv1.App] = AppWebhook{}
)

// Setup registers the defaulting and validating webhooks of App, and the guard
// of its scale subresource, with a manager.
func Setup(mgr ctrl.Manager) error {
	defaulting := admission.WithDefaulter(mgr.GetScheme(), AppWebhook{})
	defaulting.Handler = quantityChecker{next: typeChecker{next: defaulting.Handler, Reader: mgr.GetAPIReader()}}
	defaulting.RecoverPanic = ptr.To(true)
	mgr.GetWebhookServer().Register(mutatePath, defaulting)
	mgr.GetWebhookServer().Register(scalePath, &admission.Webhook{Handler: scaleGuard{Reader: mgr.GetAPIReader()}, RecoverPanic: ptr.To(true)})
	return ctrl.NewWebhookManagedBy(mgr, &appv1.App{}).
		WithValidator(AppWebhook{Client: mgr.GetClient()}).
		Complete()
}

// mutatePath is where the defaulting webhook is served (see the marker above).
const mutatePath = "/mutate-mycompany-com-v1-app"

// Default fills the App's optional fields.
func (AppWebhook) Default(_ context.Context, app *appv1.App) error {
	appv1.SetDefaults(app)
	return nil
}

// ValidateCreate refuses an invalid App with every problem in one error, and an App its
// requester may not run.
func (w AppWebhook) ValidateCreate(ctx context.Context, app *appv1.App) (admission.Warnings, error) {
	return w.validate(ctx, nil, app)
}

// ValidateUpdate refuses an update that leaves the App invalid, or that its requester may not
// make.
func (w AppWebhook) ValidateUpdate(ctx context.Context, old, app *appv1.App) (admission.Warnings, error) {
	return w.validate(ctx, old, app)
}

// ValidateDelete allows every delete.
func (AppWebhook) ValidateDelete(context.Context, *appv1.App) (admission.Warnings, error) {
	return nil, nil
}

// validate refuses an invalid App, then one whose requester lacks a permission it needs. An
// update that leaves the spec as it was passes unchecked: it cannot make the App any less
// valid, and an App stored while no webhook served its namespace must still take labels, and
// lose its finalizers when it is deleted.
func (w AppWebhook) validate(ctx context.Context, old, app *appv1.App) (admission.Warnings, error) {
	if specUnchanged(old, app) {
		return nil, nil
	}
	warnings := appv1.Warnings(app)
	if errs := appv1.Validate(app); len(errs) > 0 {
		return warnings, appv1.Invalid(app.Name, errs)
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return warnings, apierrors.NewInternalError(err)
	}
	return warnings, authorize(ctx, w.Client, req.UserInfo, app, requiredAccess(req.Operation, old, app))
}
