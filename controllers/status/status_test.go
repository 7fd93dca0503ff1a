package status_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/status"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func app(replicas int32) *appv1.App {
	return &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3},
		Spec:       appv1.AppSpec{Image: "web:2", Replicas: ptr.To(replicas)},
	}
}

// deployment is a Deployment that observed its spec and has these pod counts.
func deployment(image string, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 5}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 5, Replicas: replicas, UpdatedReplicas: updated,
		ReadyReplicas: available, AvailableReplicas: available, Conditions: conds}
	return d
}

type want struct {
	available, progressing, degraded string // condition reasons
	image                            string
	observedGeneration               int64
	// reconciling and stalled are the kstatus conditions, as "True" or "False" and a reason.
	reconciling, stalled string
}

func TestCompute(t *testing.T) {
	cases := []struct {
		name string
		app  *appv1.App
		obs  status.Observed
		want want
	}{
		{"no Deployment yet", app(2), status.Observed{},
			want{appv1.ReasonDeploymentPending, appv1.ReasonDeploymentPending, appv1.ReasonAsExpected, "", 3, "True DeploymentPending", "False AsExpected"}},
		{"rolled out", app(2), status.Observed{Deployment: deployment("web:2", 2, 2, 2), ServiceName: "web"},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonRolloutComplete, appv1.ReasonAsExpected, "web:2", 3, "False Reconciled", "False AsExpected"}},
		{"scaling up", app(3), status.Observed{Deployment: deployment("web:2", 2, 2, 2)},
			want{appv1.ReasonReplicasUnavailable, appv1.ReasonRollingOut, appv1.ReasonAsExpected, "", 3, "True RollingOut", "False AsExpected"}},
		{"rolling out a new image, old pods still serve", app(2), status.Observed{Deployment: deployment("web:2", 3, 1, 2)},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonRollingOut, appv1.ReasonAsExpected, "", 3, "True RollingOut", "False AsExpected"}},
		{"scaled to zero", app(0), status.Observed{Deployment: deployment("web:2", 0, 0, 0)},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonRolloutComplete, appv1.ReasonAsExpected, "web:2", 3, "False Reconciled", "False AsExpected"}},
		{"progress deadline exceeded", app(2), status.Observed{Deployment: deployment("web:2", 3, 1, 2,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonProgressDeadlineExceeded, appv1.ReasonProgressDeadlineExceeded, "", 3, "False ProgressDeadlineExceeded", "True ProgressDeadlineExceeded"}},
		{"replica failure", app(2), status.Observed{Deployment: deployment("web:2", 0, 0, 0,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Message: "exceeded quota"})},
			want{appv1.ReasonReplicasUnavailable, appv1.ReasonRollingOut, appv1.ReasonReplicaFailure, "", 3, "True ReplicaFailure", "False AsExpected"}},
		{"reconcile failed: the generation is not observed", app(2), status.Observed{Deployment: deployment("web:2", 2, 2, 2), Err: errors.New("boom")},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonRolloutComplete, appv1.ReasonReconcileError, "web:2", 1, "True ReconcileError", "False AsExpected"}},
		{"reconcile blocked: the generation is observed, and the App stalled", app(2), status.Observed{Deployment: deployment("web:2", 2, 2, 2), Err: errors.New("Service shop/web already exists"), Blocked: true},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonRolloutComplete, appv1.ReasonReconcileError, "web:2", 3, "False ReconcileError", "True ReconcileError"}},
		{"spec not applied: the pods of the spec applied last still serve", app(2), status.Observed{Deployment: deployment("web:1", 2, 2, 2), Err: errors.New("spec.image: Invalid value"), Blocked: true, Unapplied: true},
			want{appv1.ReasonReplicasAvailable, appv1.ReasonReconcileError, appv1.ReasonReconcileError, "web:1", 3, "False ReconcileError", "True ReconcileError"}},
		{"spec not applied, and no Deployment: none is being created", app(2), status.Observed{Err: errors.New("spec.image: Invalid value"), Blocked: true, Unapplied: true},
			want{appv1.ReasonDeploymentPending, appv1.ReasonReconcileError, appv1.ReasonReconcileError, "", 3, "False ReconcileError", "True ReconcileError"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.app.Status.ObservedGeneration = 1
			st := status.Compute(tc.app, tc.obs, t0)
			reason := func(typ string) string { return meta.FindStatusCondition(st.Conditions, typ).Reason }
			require.Equal(t, tc.want.available, reason(appv1.ConditionAvailable))
			require.Equal(t, tc.want.progressing, reason(appv1.ConditionProgressing))
			require.Equal(t, tc.want.degraded, reason(appv1.ConditionDegraded))
			kstatus := func(typ string) string {
				c := meta.FindStatusCondition(st.Conditions, typ)
				return string(c.Status) + " " + c.Reason
			}
			require.Equal(t, tc.want.reconciling, kstatus(appv1.ConditionReconciling), "Reconciling")
			require.Equal(t, tc.want.stalled, kstatus(appv1.ConditionStalled), "Stalled")
			require.Equal(t, tc.want.image, st.Image)
			require.Equal(t, tc.want.observedGeneration, st.ObservedGeneration)
			for _, c := range st.Conditions {
				require.Equal(t, int64(3), c.ObservedGeneration)
			}
			require.Equal(t, "app.kubernetes.io/instance=web,app.kubernetes.io/managed-by=app-operator", st.Selector)
		})
	}
}

func TestPodsOfTheSpecAppliedLastAreNotSaidToRunTheCurrentSpec(t *testing.T) {
	cases := []struct {
		name        string
		obs         status.Observed
		progressing string
	}{
		{"the Deployment applied, another child refused",
			status.Observed{Err: errors.New("Service shop/web already exists"), Blocked: true},
			"every pod runs the current spec"},
		{"the Deployment not applied, to be retried",
			status.Observed{Err: errors.New("timeout"), Unapplied: true},
			"every pod runs the spec applied last; the current spec is not applied (see Degraded)"},
		{"the Deployment not applied, until the App or what blocks it changes",
			status.Observed{Err: errors.New("spec.image: Invalid value"), Blocked: true, Unapplied: true},
			"nothing of the current spec rolls out until it can be applied (see Stalled)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.obs.Deployment = deployment("web:1", 2, 2, 2)
			st := status.Compute(app(2), tc.obs, t0)
			require.Equal(t, tc.progressing, meta.FindStatusCondition(st.Conditions, appv1.ConditionProgressing).Message)
			require.Equal(t, "2 of 2 pods available", meta.FindStatusCondition(st.Conditions, appv1.ConditionAvailable).Message)
		})
	}
}

func TestComputeIsStableAndTimesOnlyFlip(t *testing.T) {
	a := app(2)
	obs := status.Observed{Deployment: deployment("web:2", 2, 2, 1), ServiceName: "web"}
	a.Status = status.Compute(a, obs, t0)
	require.Equal(t, int32(1), a.Status.AvailableReplicas)
	require.Equal(t, "web", a.Status.ServiceName)

	// Same facts later: nothing changes, so the caller writes nothing.
	require.Equal(t, a.Status, status.Compute(a, obs, t1))

	// Available flips: its transition time moves; Degraded's does not.
	next := status.Compute(a, status.Observed{Deployment: deployment("web:2", 2, 2, 2), ServiceName: "web"}, t1)
	require.Equal(t, t1, meta.FindStatusCondition(next.Conditions, appv1.ConditionAvailable).LastTransitionTime)
	require.Equal(t, t0, meta.FindStatusCondition(next.Conditions, appv1.ConditionDegraded).LastTransitionTime)
}

func TestComputeKeepsWhatAFailedReconcileCouldNotSee(t *testing.T) {
	a := app(2)
	a.Status = status.Compute(a, status.Observed{Deployment: deployment("web:1", 2, 2, 2), ServiceName: "web"}, t0)
	a.Generation = 4
	st := status.Compute(a, status.Observed{Err: errors.New("apply failed")}, t1)
	require.Equal(t, int32(2), st.AvailableReplicas, "last observed counts stay")
	require.Equal(t, "web", st.ServiceName)
	require.Equal(t, "web:1", st.Image)
	require.Equal(t, int64(3), st.ObservedGeneration, "a failed reconcile does not observe the new generation")
	require.Equal(t, "apply failed", meta.FindStatusCondition(st.Conditions, appv1.ConditionDegraded).Message)
}

func TestAutoscaledAppsAimForTheAutoscalersCount(t *testing.T) {
	a := app(1)
	a.Spec.Autoscaling = &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 10}
	d := deployment("web:2", 5, 5, 5)
	d.Spec.Replicas = ptr.To(int32(5))
	st := status.Compute(a, status.Observed{Deployment: d}, t0)
	require.True(t, meta.IsStatusConditionTrue(st.Conditions, appv1.ConditionAvailable))
	require.Equal(t, "5 of 5 pods available", meta.FindStatusCondition(st.Conditions, appv1.ConditionAvailable).Message)
	require.Equal(t, ptr.To(int32(5)), st.DesiredReplicas, "the autoscaler's count, which kubectl shows as DESIRED")
}

func TestDesiredReplicasFollowWhoeverOwnsTheCount(t *testing.T) {
	autoscaled := func(minReplicas *int32) *appv1.App {
		a := app(1)
		a.Spec.Autoscaling = &appv1.AutoscalingSpec{MinReplicas: minReplicas, MaxReplicas: 10}
		return a
	}
	scaledTo := func(n int32) *appsv1.Deployment {
		d := deployment("web:2", n, n, n)
		d.Spec.Replicas = ptr.To(n)
		return d
	}
	cases := []struct {
		name string
		app  *appv1.App
		obs  status.Observed
		want int32
	}{
		{"the App's spec", app(3), status.Observed{Deployment: scaledTo(3)}, 3},
		{"the App's spec, scaled to zero", app(0), status.Observed{Deployment: scaledTo(0)}, 0},
		{"the App's spec, before the Deployment exists", app(4), status.Observed{}, 4},
		{"the autoscaler, once it scaled the Deployment", autoscaled(ptr.To(int32(2))), status.Observed{Deployment: scaledTo(7)}, 7},
		{"the autoscaler's minimum, before the Deployment exists", autoscaled(ptr.To(int32(2))), status.Observed{}, 2},
		{"the default, for an autoscaled App with no minimum", autoscaled(nil), status.Observed{}, appv1.DefaultReplicas},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, ptr.To(tc.want), status.Compute(tc.app, tc.obs, t0).DesiredReplicas)
		})
	}
}
