// Package controllers holds App Operator's reconciler. Each reconcile reads as
// fetch -> desired -> apply -> status: it reads the App, builds its desired children with the
// pure functions of package desired, applies them at once with package apply (which writes
// nothing when a child already matches), and writes the status computed by package status
// once, only when it changed.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/cachesync"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/controllers/status"
	"github.com/mycompany/app-operator/internal/metrics"
)

// ControllerName names the App controller in logs, metrics and Events.
const ControllerName = "app"

// ReasonApplyFailed is the reason of the Event of a reconcile that failed to apply a child.
const ReasonApplyFailed = "ApplyFailed"

// AppReconciler drives each App to its Deployment, Service, HorizontalPodAutoscaler and
// PodDisruptionBudget, and reports what it finds in the App's status.
type AppReconciler struct {
	// Client reads Apps and children from the manager's cache and writes to the API server.
	Client client.Client
	// Reader reads past the cache: the ReplicaSets of a Deployment to roll back.
	Reader client.Reader
	// Applier applies and removes children.
	Applier *apply.Applier
	// Recorder emits Events about the App.
	Recorder events.EventRecorder
	// Options are passed to the builders of desired children.
	Options desired.Options
	// Writes remembers the reconciler's writes, of the App's status and (through the
	// Applier, which shares it) of its children, until the cache shows them.
	Writes *cachesync.Tracker
}

// +kubebuilder:rbac:groups=mycompany.com,resources=apps,verbs=get;list;watch
// +kubebuilder:rbac:groups=mycompany.com,resources=apps/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one App to its desired state.
func (r *AppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	metrics.ReconcileCount.WithLabelValues(ControllerName).Inc()
	requeueAfter, err := r.reconcile(ctx, req)
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace and the App in it are going away; nothing is left to do.
		err = nil
	}
	metrics.ReconcileDuration.WithLabelValues(ControllerName).Observe(time.Since(start).Seconds())
	if err != nil {
		metrics.ReconcileErrors.WithLabelValues(ControllerName, errorReason(err)).Inc()
	}
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		// The spec cannot be applied as it is; retrying will not help until the App changes.
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{RequeueAfter: requeueAfter}, err
}

// reconcile returns how long to wait for the cache, when it is behind the reconciler's own
// writes.
func (r *AppReconciler) reconcile(ctx context.Context, req ctrl.Request) (time.Duration, error) {
	app := &appv1.App{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.Writes.Forget(req.NamespacedName)
		}
		return 0, client.IgnoreNotFound(err)
	}
	if behind, wait := r.Writes.Behind(appID(req.NamespacedName), app); behind {
		// The cache does not show the last status write yet: its watch event brings the App back.
		return wait, nil
	}
	if !app.DeletionTimestamp.IsZero() {
		// The children carry the App as controller owner: the garbage collector removes them.
		return 0, nil
	}

	objs := desired.For(app, r.Options)
	specTemplate := desired.TemplateHash(&objs.Deployment.Spec.Template)
	var observed status.Observed
	awaiting := false
	if err := validate(app); err != nil {
		// Its children stay as they are until the App is valid.
		observed = status.Observed{Err: err, Blocked: true, Unapplied: true}
		if !reported(app, err) {
			r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, ReasonInvalid, "Validate", "%v", err)
		}
	} else if err := r.holdRollback(ctx, app, objs.Deployment, specTemplate); err != nil {
		observed = status.Observed{Err: err, Blocked: blocked(err), Unapplied: true}
	} else {
		observed, awaiting = r.applyChildren(ctx, app, objs)
	}
	if observed.Unapplied {
		observed.Deployment = r.running(ctx, app, objs.Deployment)
	}
	observed.SpecTemplate = specTemplate
	if awaiting && observed.Err == nil {
		// The cache does not show a child's last write yet: report on the App once it does.
		return cachesync.MaxWait, nil
	}
	return 0, errors.Join(observed.Err, r.writeStatus(ctx, app, observed))
}

func appID(key client.ObjectKey) cachesync.ID { return cachesync.ID{Kind: "App", Key: key} }

// applyChildren applies each wanted child and removes each unwanted one, all at once: they are
// independent objects, so a reconcile that creates them takes about as long as one write. It
// emits one Event listing what it changed, in the children's order, and one listing what
// failed. It reports whether a child it created earlier is awaited in the cache.
func (r *AppReconciler) applyChildren(ctx context.Context, app *appv1.App, objs desired.Objects) (observed status.Observed, awaiting bool) {
	children := objs.Children(app)
	outcomes := make([]outcome, len(children))
	var wg sync.WaitGroup
	for i, child := range children {
		wg.Go(func() { outcomes[i] = r.applyChild(ctx, app, child) })
	}
	wg.Wait()

	var changes []string
	var errs []error
	reason := ""
	for i, o := range outcomes {
		if o.err != nil {
			errs = append(errs, o.err)
			_, isDeployment := children[i].Object.(*appsv1.Deployment)
			observed.Unapplied = observed.Unapplied || isDeployment
			continue
		}
		awaiting = awaiting || o.result == apply.Awaiting
		if o.result != apply.Unchanged && o.result != apply.Awaiting {
			gvk, _ := apiutil.GVKForObject(children[i].Object, r.Client.Scheme())
			change := fmt.Sprintf("%s %s %s", o.result, gvk.Kind, children[i].Object.GetName())
			if heal := healing(app, o.result, gvk.Kind, children[i].Object.GetName()); heal != "" {
				change = heal
				observed.Healed = append(observed.Healed, heal)
			}
			changes = append(changes, change)
			if reason == "" {
				reason = string(o.result)
			}
		}
		switch c := o.current.(type) {
		case *appsv1.Deployment:
			observed.Deployment = c
		case *corev1.Service:
			observed.ServiceName = c.Name
		}
	}
	if len(observed.Healed) > 0 {
		reason = ReasonHealed
	}
	if len(changes) > 0 {
		log.FromContext(ctx).Info("applied the App's children", "changes", changes)
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, reason, "Apply", "%s", strings.Join(changes, "; "))
	}
	if len(errs) > 0 {
		observed.Err = errors.Join(errs...)
		observed.Blocked = !slices.ContainsFunc(errs, func(err error) bool { return !blocked(err) })
		if !observed.Blocked || !reported(app, observed.Err) {
			r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, ReasonApplyFailed, "Apply", "%v", observed.Err)
		}
	}
	return observed, awaiting
}

// running returns the App's Deployment as the cache shows it, for a reconcile that did not
// apply it: the pods that run under the spec applied last. It returns nil when the App has
// none: a Deployment of that name that the App does not control is not the App's.
func (r *AppReconciler) running(ctx context.Context, app *appv1.App, d *appsv1.Deployment) *appsv1.Deployment {
	current := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(d), current); err != nil || !metav1.IsControlledBy(current, app) {
		return nil
	}
	return current
}

// outcome is what applying or removing one child did.
type outcome struct {
	current client.Object
	result  apply.Result
	err     error
}

func (r *AppReconciler) applyChild(ctx context.Context, app *appv1.App, child desired.Child) outcome {
	if !child.Wanted {
		result, err := r.Applier.Remove(ctx, app, child.Object)
		return outcome{result: result, err: err}
	}
	current, result, err := r.Applier.Apply(ctx, app, child.Object)
	return outcome{current: current, result: result, err: err}
}

// writeStatus writes the App's status in one patch, only when it changed.
func (r *AppReconciler) writeStatus(ctx context.Context, app *appv1.App, observed status.Observed) error {
	next := status.Compute(app, observed, metav1.Now())
	if equality.Semantic.DeepEqual(next, app.Status) {
		return nil
	}
	before := app.Status.Rollout
	patch := client.MergeFrom(app.DeepCopy())
	app.Status = next
	if err := r.Client.Status().Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	r.Writes.Wrote(client.ObjectKeyFromObject(app), appID(client.ObjectKeyFromObject(app)), app)
	r.reportRollback(app, before)
	return nil
}

// SetupWithManager registers the reconciler with a manager. It watches Apps and owns their
// children, so a change to either brings the App back to its desired state.
func (r *AppReconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrentReconciles int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&appv1.App{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Complete(r)
}
