package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

type test func(ctx context.Context, c client.Client, ns string) v1alpha3.TestResult

var tests = map[string]test{
	"app-becomes-available": appBecomesAvailable,
	"invalid-app-refused":   invalidAppRefused,
}

// sampleImage is the sample workload that config/samples runs: App Operator publishes it beside
// its own images.
const sampleImage = "quay.io/mycompany/app-operator-sample:v1.0.0"

func pass(log string) v1alpha3.TestResult {
	return v1alpha3.TestResult{State: v1alpha3.PassState, Log: log}
}

func fail(err error, suggestion string) v1alpha3.TestResult {
	return v1alpha3.TestResult{State: v1alpha3.FailState, Errors: []string{err.Error()}, Suggestions: []string{suggestion}}
}

// appBecomesAvailable creates an App and waits until all its replicas are available.
func appBecomesAvailable(ctx context.Context, c client.Client, ns string) v1alpha3.TestResult {
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "scorecard-"},
		Spec:       appv1.AppSpec{Image: sampleImage, Replicas: ptr.To(int32(2))},
	}
	if err := c.Create(ctx, app); err != nil {
		return fail(err, "check that App Operator is installed and its webhooks answer")
	}
	defer func() { _ = c.Delete(context.Background(), app) }()
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return false, nil //nolint:nilerr // a read that fails is tried again until the deadline
		}
		return app.Status.ObservedGeneration == app.Generation && app.Status.AvailableReplicas == 2 &&
			meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable), nil
	})
	if err != nil {
		return fail(fmt.Errorf("App %s/%s did not become Available with 2 replicas within 2m: last status %+v", ns, app.Name, app.Status),
			"check the manager's log and the App's Deployment and Events")
	}
	return pass(fmt.Sprintf("App %s/%s became Available with 2 replicas in %s", ns, app.Name, time.Since(start).Round(time.Millisecond)))
}

// invalidAppRefused submits an invalid App (dry run) and expects a refusal naming each field.
func invalidAppRefused(ctx context.Context, c client.Client, ns string) v1alpha3.TestResult {
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorecard-invalid"},
		Spec: appv1.AppSpec{Image: "not a reference",
			Ports: []appv1.AppPort{{Name: "a", ContainerPort: 80}, {Name: "b", ContainerPort: 80}}},
	}
	err := c.Create(ctx, app, client.DryRunAll)
	switch {
	case err == nil:
		return fail(fmt.Errorf("an App with an invalid image and a duplicated port was accepted"), "check that the validating webhook is installed")
	case !apierrors.IsInvalid(err):
		return fail(fmt.Errorf("want 422 Invalid, got %w", err), "check that the validating webhook answers")
	}
	for _, field := range []string{"spec.image", "spec.ports[1].containerPort"} {
		if !strings.Contains(err.Error(), field) {
			return fail(fmt.Errorf("the refusal does not name %s: %w", field, err), "")
		}
	}
	return pass("refused: " + err.Error())
}
