// Package status computes an App's status from what a reconcile observed, as a pure function:
// no client, and the clock comes in as an argument.
package status

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

// Observed is what one reconcile saw of an App's children.
type Observed struct {
	// Deployment is the App's Deployment as it is now, or nil when there is none or it could
	// not be read; the replica counts then keep their last observed values.
	Deployment *appsv1.Deployment
	// Unapplied says that the reconcile did not apply the App's spec to its Deployment (it was
	// invalid, blocked, or refused). Deployment is then the one the cache shows: the pods that
	// run, under the spec applied last, whose rollout says nothing of the current spec.
	Unapplied bool
	// ServiceName is the name of the App's Service, or empty when it has none. It is
	// recorded only when the reconcile succeeded.
	ServiceName string
	// Err is the error that stopped the reconcile from applying the desired state, if any.
	Err error
	// Blocked says that Err needs a change, of the App or of what stands in its way (an object
	// of a child's name that the App does not control, a spec the API server refuses): retrying
	// alone will not help. The generation counts as observed, and the App as stalled.
	Blocked bool
	// Healed says what this reconcile undid of someone else's changes to the children, one
	// entry per child: "recreated Service web, which was missing".
	Healed []string
	// SpecTemplate identifies the pod template the App's spec asks for (desired.TemplateHash),
	// so that a rollback of it is recorded, and forgotten once the spec asks for another.
	SpecTemplate string
}

// Compute returns the status the App should have. Condition transition times change only
// when a condition's status flips, so computing twice from the same facts yields the same
// status, and the caller can skip the write.
func Compute(app *appv1.App, obs Observed, now metav1.Time) appv1.AppStatus {
	st := *app.Status.DeepCopy()
	st.Selector = labels.SelectorFromSet(desired.SelectorLabels(app)).String()
	if obs.Err == nil {
		st.ServiceName = obs.ServiceName
	}
	if obs.Err == nil || obs.Blocked {
		st.ObservedGeneration = app.Generation
	}

	d := obs.Deployment
	want := wantedReplicas(app, d)
	st.DesiredReplicas = &want
	var rollout rolloutState
	if d != nil {
		st.Replicas = d.Status.Replicas
		st.ReadyReplicas = d.Status.ReadyReplicas
		st.AvailableReplicas = d.Status.AvailableReplicas
		st.UpdatedReplicas = d.Status.UpdatedReplicas
		rollout = rolloutOf(d, want)
		if rollout.complete {
			st.Image = imageOf(d)
		}
	}
	if len(obs.Healed) > 0 {
		count := int32(1)
		if app.Status.Healed != nil {
			count += app.Status.Healed.Count
		}
		st.Healed = &appv1.Healed{Count: count, Last: strings.Join(obs.Healed, "; "), Time: now}
	}
	applied := d
	if obs.Unapplied {
		applied = nil
	}
	st.Rollout = rolloutRecord(app, applied, rollout, obs.SpecTemplate, now)
	if st.Rollout != nil {
		rollout.rolledBack = st.Rollout.RolledBack
	}

	set := func(c metav1.Condition) {
		c.ObservedGeneration = app.Generation
		c.LastTransitionTime = now
		meta.SetStatusCondition(&st.Conditions, c)
	}
	set(available(d, want))
	set(progressing(d, rollout, obs))
	set(degraded(obs.Err, rollout))
	stalled := stalledCondition(obs, rollout)
	set(stalled)
	set(reconciling(d, want, obs.Err, rollout, stalled))
	return st
}

// rolloutState is what the Deployment says of its latest rollout.
type rolloutState struct {
	observed         bool // the Deployment controller has seen the current Deployment spec
	complete         bool // every pod runs the current template and is available
	deadlineExceeded bool
	replicaFailure   *appsv1.DeploymentCondition
	// rolledBack is the rollback of the template the App's spec asks for, if it was rolled back.
	rolledBack *appv1.RolledBack
}

func rolloutOf(d *appsv1.Deployment, want int32) rolloutState {
	s := d.Status
	r := rolloutState{observed: s.ObservedGeneration >= d.Generation}
	r.complete = r.observed && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
	for i := range s.Conditions {
		c := &s.Conditions[i]
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded":
			r.deadlineExceeded = true
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			r.replicaFailure = c
		}
	}
	return r
}

// wantedReplicas is the replica count the App aims for: the autoscaler's choice while it owns
// the count, otherwise the App's own.
func wantedReplicas(app *appv1.App, d *appsv1.Deployment) int32 {
	if app.Spec.Autoscaling != nil && d != nil && d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	if app.Spec.Autoscaling != nil && app.Spec.Autoscaling.MinReplicas != nil {
		return *app.Spec.Autoscaling.MinReplicas
	}
	if app.Spec.Replicas != nil {
		return *app.Spec.Replicas
	}
	return appv1.DefaultReplicas
}

func imageOf(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == desired.ContainerName {
			return c.Image
		}
	}
	return ""
}

func available(d *appsv1.Deployment, want int32) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionAvailable}
	switch {
	case d == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonDeploymentPending, "the Deployment does not exist yet"
	case d.Status.AvailableReplicas >= want:
		c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonReplicasAvailable
		c.Message = fmt.Sprintf("%d of %d pods available", d.Status.AvailableReplicas, want)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, appv1.ReasonReplicasUnavailable
		c.Message = fmt.Sprintf("%d of %d pods available", d.Status.AvailableReplicas, want)
	}
	return c
}

func progressing(d *appsv1.Deployment, r rolloutState, obs Observed) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionProgressing}
	switch {
	case obs.Unapplied && obs.Blocked:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonReconcileError, "nothing of the current spec rolls out until it can be applied (see Stalled)"
	case d == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonDeploymentPending, "creating the Deployment"
	case r.rolledBack != nil && r.complete:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonRolledBack, "every pod runs the last pod template that was fully available"
	case r.rolledBack != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonRolledBack, "restoring the last pod template that was fully available"
	case r.deadlineExceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonProgressDeadlineExceeded, "the rollout made no progress within its deadline"
	case r.complete && obs.Unapplied:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonRolloutComplete, "every pod runs the spec applied last; the current spec is not applied (see Degraded)"
	case r.complete:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonRolloutComplete, "every pod runs the current spec"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appv1.ReasonRollingOut
		c.Message = fmt.Sprintf("%d pods updated, %d available, %d in all", d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.Replicas)
	}
	return c
}

func degraded(err error, r rolloutState) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionDegraded}
	switch {
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonReconcileError, err.Error()
	case r.rolledBack != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonRolledBack, rolledBackMessage(r.rolledBack)
	case r.deadlineExceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonProgressDeadlineExceeded, "the rollout made no progress within its deadline"
	case r.replicaFailure != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appv1.ReasonReplicaFailure, r.replicaFailure.Message
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonAsExpected, "no problem found"
	}
	return c
}

// reconciling follows kstatus: True while the App does not match its spec, that is until its
// rollout is complete with every pod available, unless it is stalled. Its reason says where
// the App stands, or why it does not get there: kubectl's REASON column shows it.
func reconciling(d *appsv1.Deployment, want int32, err error, r rolloutState, stalled metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionReconciling, Status: metav1.ConditionTrue}
	switch {
	case stalled.Status == metav1.ConditionTrue:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, stalled.Reason, "stalled: "+stalled.Message
	case err != nil:
		c.Reason, c.Message = appv1.ReasonReconcileError, "retrying: "+err.Error()
	case d == nil:
		c.Reason, c.Message = appv1.ReasonDeploymentPending, "creating the Deployment"
	case r.replicaFailure != nil:
		c.Reason, c.Message = appv1.ReasonReplicaFailure, "retrying: "+r.replicaFailure.Message
	case r.complete && d.Status.AvailableReplicas >= want:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonReconciled, "the App matches its spec"
	default:
		c.Reason = appv1.ReasonRollingOut
		c.Message = fmt.Sprintf("%d of %d pods updated and available", min(d.Status.UpdatedReplicas, d.Status.AvailableReplicas), want)
	}
	return c
}

// stalledCondition follows kstatus: True when the App cannot match its spec without a change:
// its rollout made no progress within its deadline, or the reconcile is blocked.
func stalledCondition(obs Observed, r rolloutState) metav1.Condition {
	c := metav1.Condition{Type: appv1.ConditionStalled, Status: metav1.ConditionTrue}
	switch {
	case obs.Err != nil && obs.Blocked:
		c.Reason, c.Message = appv1.ReasonReconcileError, obs.Err.Error()
	case r.rolledBack != nil:
		c.Reason, c.Message = appv1.ReasonRolledBack, rolledBackMessage(r.rolledBack)+"; change the pod template to roll out again"
	case r.deadlineExceeded:
		c.Reason, c.Message = appv1.ReasonProgressDeadlineExceeded, "the rollout made no progress within its deadline"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, appv1.ReasonAsExpected, "no problem found"
	}
	return c
}

func rolledBackMessage(rb *appv1.RolledBack) string {
	return fmt.Sprintf("the rollout of image %s made no progress within its deadline; rolled back to the last pod template that was fully available", rb.Image)
}
