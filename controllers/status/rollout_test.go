package status_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/controllers/status"
)

var stuck = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}

func TestRolloutRecord(t *testing.T) {
	good, bad := deployment("web:1", 2, 2, 2), deployment("web:2", 3, 1, 2, stuck)
	goodHash := desired.TemplateHash(&good.Spec.Template)
	const specTemplate = "spec-of-web-2"
	earlier := &appv1.RolledBack{Template: specTemplate, Image: "web:2", Time: t0}
	refused := errors.New(`App.mycompany.com "web" is invalid: spec.image: Invalid value`)

	cases := []struct {
		name         string
		record       *appv1.RolloutStatus // the App's status.rollout before
		optOut       bool
		obs          status.Observed
		want         *appv1.RolloutStatus
		degraded     string
		progressing  string
		stalledTrue  bool
		specTemplate string
	}{
		{name: "a completed rollout records its template",
			obs:  status.Observed{Deployment: good},
			want: &appv1.RolloutStatus{AvailableTemplate: goodHash}, degraded: appv1.ReasonAsExpected, progressing: appv1.ReasonRolloutComplete},
		{name: "a stuck rollout after a good one is rolled back",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash}, obs: status.Observed{Deployment: bad},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash, RolledBack: &appv1.RolledBack{Template: specTemplate, Image: "web:2", Time: t1}},
			degraded: appv1.ReasonRolledBack, progressing: appv1.ReasonRolledBack, stalledTrue: true},
		{name: "opted out: a stuck rollout stays as it is",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash}, optOut: true, obs: status.Observed{Deployment: bad},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded: appv1.ReasonProgressDeadlineExceeded, progressing: appv1.ReasonProgressDeadlineExceeded, stalledTrue: true},
		{name: "the first rollout is stuck: nothing to roll back to",
			obs:      status.Observed{Deployment: bad},
			degraded: appv1.ReasonProgressDeadlineExceeded, progressing: appv1.ReasonProgressDeadlineExceeded, stalledTrue: true},
		{name: "the good template itself is stuck: nothing to roll back to",
			record:   &appv1.RolloutStatus{AvailableTemplate: goodHash},
			obs:      status.Observed{Deployment: deployment("web:1", 3, 1, 2, stuck)},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded: appv1.ReasonProgressDeadlineExceeded, progressing: appv1.ReasonProgressDeadlineExceeded, stalledTrue: true},
		{name: "a deadline the Deployment controller has not checked against the current spec",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash},
			obs: status.Observed{Deployment: func() *appsv1.Deployment {
				d := bad.DeepCopy()
				d.Generation++
				return d
			}()},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded: appv1.ReasonProgressDeadlineExceeded, progressing: appv1.ReasonProgressDeadlineExceeded, stalledTrue: true},
		{name: "rolled back, the good pods are back: the rollback holds, its time unchanged",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash, RolledBack: earlier}, obs: status.Observed{Deployment: good},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash, RolledBack: earlier},
			degraded: appv1.ReasonRolledBack, progressing: appv1.ReasonRolledBack, stalledTrue: true},
		{name: "rolled back, then the spec asks for another template: the rollback is forgotten",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash, RolledBack: earlier}, obs: status.Observed{Deployment: good},
			specTemplate: "spec-of-web-3",
			want:         &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded:     appv1.ReasonAsExpected, progressing: appv1.ReasonRolloutComplete},
		{name: "spec not applied: a completed rollout of the spec applied last records nothing",
			obs:      status.Observed{Deployment: good, Err: refused, Blocked: true, Unapplied: true},
			degraded: appv1.ReasonReconcileError, progressing: appv1.ReasonReconcileError, stalledTrue: true},
		{name: "spec not applied: a stuck rollout of the spec applied last is not rolled back",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash}, obs: status.Observed{Deployment: bad, Err: refused, Blocked: true, Unapplied: true},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded: appv1.ReasonReconcileError, progressing: appv1.ReasonReconcileError, stalledTrue: true},
		{name: "rolled back, then opted out: the rollback is forgotten",
			record: &appv1.RolloutStatus{AvailableTemplate: goodHash, RolledBack: earlier}, optOut: true, obs: status.Observed{Deployment: good},
			want:     &appv1.RolloutStatus{AvailableTemplate: goodHash},
			degraded: appv1.ReasonAsExpected, progressing: appv1.ReasonRolloutComplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := app(2)
			a.Status.Rollout = tc.record
			if tc.optOut {
				a.Spec.Rollout = &appv1.RolloutSpec{AutoRollback: ptr.To(false)}
			}
			tc.obs.SpecTemplate = specTemplate
			if tc.specTemplate != "" {
				tc.obs.SpecTemplate = tc.specTemplate
			}
			st := status.Compute(a, tc.obs, t1)
			require.Equal(t, tc.want, st.Rollout)
			require.Equal(t, tc.degraded, meta.FindStatusCondition(st.Conditions, appv1.ConditionDegraded).Reason)
			require.Equal(t, tc.progressing, meta.FindStatusCondition(st.Conditions, appv1.ConditionProgressing).Reason)
			require.Equal(t, tc.stalledTrue, meta.IsStatusConditionTrue(st.Conditions, appv1.ConditionStalled))
			if tc.degraded == appv1.ReasonRolledBack {
				require.Contains(t, meta.FindStatusCondition(st.Conditions, appv1.ConditionDegraded).Message, "the rollout of image web:2 ")
				require.Equal(t, appv1.ReasonRolledBack, meta.FindStatusCondition(st.Conditions, appv1.ConditionReconciling).Reason, "kubectl's REASON column")
			}
		})
	}
}
