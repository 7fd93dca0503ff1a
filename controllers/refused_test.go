package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers"
	"github.com/mycompany/app-operator/internal/envtest"
)

// A Deployment the API server refuses, here by a cluster's admission policy on images, stalls
// the App with the API server's reason, which names the field; the operator does not retry
// until the App changes, and a change that the policy allows rolls out.
func TestAChildTheAPIServerRefusesStallsTheAppNamingTheField(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const refusal = "spec.template.spec.containers[0].image: images of blocked.example.com may not run here"
	refuseImages(t, ns, "blocked.example.com/", refusal)

	app := newApp(ns, "web")
	app.Spec.Image = "blocked.example.com/web:1.0"
	require.NoError(t, env.Client.Create(ctx, app))
	requireStalled(t, app, func(c *require.Assertions, stalled *metav1.Condition) {
		c.Equal(appv1.ReasonReconcileError, stalled.Reason)
		c.Contains(stalled.Message, refusal)
		c.Contains(eventMessages(t, app, controllers.ReasonApplyFailed), stalled.Message)
	})
	absent(require.New(t), app, &appsv1.Deployment{})

	requireNoRetry(t)
	requireReportedOnce(t, app, controllers.ReasonApplyFailed)

	env.Update(t, app, func() { app.Spec.Image = "registry.example.com/web:2.0" })
	requireRecovered(t, app, "registry.example.com/web:2.0")
}

// An invalid App that no webhook checked, stored while none served its namespace, stalls
// naming every field at fault, and nothing of it is applied until it is valid.
func TestAnAppNoWebhookCheckedIsValidatedBeforeAnythingIsApplied(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	env.WithoutWebhooks(t, ns)

	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appv1.AppSpec{Image: "registry.example.com/web:not a tag", PodLabels: map[string]string{appv1.LabelInstance: "other"}}}
	require.NoError(t, env.Client.Create(ctx, app))
	const want = `App.mycompany.com "web" is invalid: [spec.image: Invalid value: "registry.example.com/web:not a tag": not a valid image reference: invalid reference format, spec.podLabels[app.kubernetes.io/instance]: Forbidden: is set by the operator to select the App's pods]`
	requireStalled(t, app, func(c *require.Assertions, stalled *metav1.Condition) {
		c.Equal(want, stalled.Message)
		c.Equal([]string{want}, eventMessages(t, app, controllers.ReasonInvalid))
	})
	for _, child := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		absent(require.New(t), app, child)
	}
	requireNoRetry(t)
	requireReportedOnce(t, app, controllers.ReasonInvalid)

	env.Update(t, app, func() { app.Spec.Image, app.Spec.PodLabels = "registry.example.com/web:1.0", nil })
	requireRecovered(t, app, "registry.example.com/web:1.0")
	get(require.New(t), app, &corev1.Service{})
}

// An edit that cannot be applied, refused by the API server or invalid where no webhook
// checked it, leaves the pods of the spec applied last running, and the App's status reports
// them: their counts, their image, Available; Progressing says the current spec is not applied.
func TestAnEditThatCannotBeAppliedReportsThePodsThatRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse func(t *testing.T, ns string)
		image  string
		field  string // that the App's Stalled condition names
	}{
		{"refused by the API server", func(t *testing.T, ns string) {
			refuseImages(t, ns, "blocked.example.com/", "spec.template.spec.containers[0].image: images of blocked.example.com may not run here")
		}, "blocked.example.com/web:2.0", "spec.template.spec.containers[0].image"},
		{"invalid, and no webhook checked it", func(t *testing.T, ns string) { env.WithoutWebhooks(t, ns) },
			"registry.example.com/web:not a tag", "spec.image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, _ := rolledOutApp(t, nil)
			tc.refuse(t, app.Namespace)
			env.Update(t, app, func() { app.Spec.Image = tc.image })
			requireStalled(t, app, func(c *require.Assertions, stalled *metav1.Condition) {
				c.Contains(stalled.Message, tc.field)
				c.Equal(int32(2), app.Status.AvailableReplicas)
				c.True(meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable))
				c.Equal("nothing of the current spec rolls out until it can be applied (see Stalled)",
					meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionProgressing).Message)
				c.Equal("registry.example.com/web:1.0", app.Status.Image)
			})
			deploymentImage(t, app, "registry.example.com/web:1.0")
		})
	}
}

// requireStalled waits until the App has observed its generation and stalls, and check passes
// on its Stalled condition.
func requireStalled(t *testing.T, app *appv1.App, check func(c *require.Assertions, stalled *metav1.Condition)) {
	t.Helper()
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Equal(app.Generation, app.Status.ObservedGeneration)
		stalled := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionStalled)
		c.NotNil(stalled)
		c.Equal(metav1.ConditionTrue, stalled.Status)
		check(c, stalled)
	})
}

// requireNoRetry checks that once the App controller is idle, no reconcile runs and nothing
// is written while nothing changes: a refused App waits for a change.
func requireNoRetry(t *testing.T) {
	t.Helper()
	envtest.WaitIdle(t)
	writes, reconciles := env.Writes.Load(), envtest.Reconciles()
	require.Never(t, func() bool { return envtest.Reconciles() != reconciles }, 2*time.Second, 50*time.Millisecond,
		"the App is reconciled again though nothing changed")
	require.Equal(t, writes, env.Writes.Load(), "no write while nothing changed")
}

// requireReportedOnce checks that the App has one Event with reason, emitted once: the
// event broadcaster writes a repeat of an Event as its series.
func requireReportedOnce(t *testing.T, app *appv1.App, reason string) {
	t.Helper()
	events := appEvents(t, app, reason)
	require.Equal(t, 1, len(events), "the %s Events: %q", reason, notes(events))
	require.Nil(t, events[0].Series, "the %s Event was emitted again", reason)
}

// requireRecovered waits until the App's Deployment runs image and the App no longer stalls.
func requireRecovered(t *testing.T, app *appv1.App, image string) {
	t.Helper()
	deploymentImage(t, app, image)
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		c.Equal(app.Generation, app.Status.ObservedGeneration)
		c.True(meta.IsStatusConditionFalse(app.Status.Conditions, appv1.ConditionStalled))
	})
}

// refuseImages makes the API server refuse, in one namespace, every Deployment with an image
// whose reference starts with prefix, with message, as an admission policy of the cluster's
// administrators would. It returns once the policy is in force.
func refuseImages(t *testing.T, ns, prefix, message string) {
	t.Helper()
	ctx := context.Background()
	name := "refuse-images-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.spec.template.spec.containers.all(c, !c.image.startsWith(%q))", prefix),
				Message:    message,
				Reason:     ptr.To(metav1.StatusReasonInvalid),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		require.NoError(t, env.Client.Create(ctx, obj))
		t.Cleanup(func() { require.NoError(t, env.Client.Delete(context.Background(), obj)) })
	}

	// The API server compiles a new policy in the background: a dry run shows when it refuses.
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "policy-probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: prefix + "probe:1"}}},
			},
		},
	}
	envtest.Eventually(t, func(c *require.Assertions) {
		err := env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		c.Truef(apierrors.IsInvalid(err), "the policy refuses the probe as invalid: %v", err)
	})
}
