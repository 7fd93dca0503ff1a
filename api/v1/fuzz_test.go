package v1_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// seeds are Apps, as JSON, that start every fuzz target; they run on every go test.
var seeds = []string{
	`{"metadata":{"name":"web"},"spec":{"image":"nginx:1.27"}}`,
	`{"metadata":{"name":"web"},"spec":{"image":"nginx","replicas":3,"ports":[{"name":"http","containerPort":8080},{"name":"dns","containerPort":53,"protocol":"UDP"}],"service":{"type":"NodePort","port":8080,"targetPort":"dns"}}}`,
	`{"metadata":{"name":"w"},"spec":{"image":"r.example.com/w@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","autoscaling":{"minReplicas":5,"maxReplicas":2,"targetCPUUtilizationPercentage":0},"disruptionBudget":{"minAvailable":"150%","maxUnavailable":1}}}`,
	`{"metadata":{"name":"9-Bad.Name"},"spec":{"image":"","replicas":-1,"ports":[{"name":"","containerPort":0}],"rollout":{"maxSurge":0,"maxUnavailable":"0%","progressDeadlineSeconds":0}}}`,
	`{"metadata":{"name":"web"},"spec":{"image":"nginx","probes":{"readiness":{"httpGet":{"port":"nope"},"exec":{"command":["true"]}},"liveness":{"grpc":{"port":70000}}},"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}}`,
	`{"metadata":{"name":"web"},"spec":{"image":"nginx","securityContext":{"pod":{"runAsNonRoot":false},"container":{"privileged":true}},"podLabels":{"app.kubernetes.io/instance":"x","":"y"},"podAnnotations":{"a b":"c"},"env":[{"name":"","value":"v","valueFrom":{}}]}}`,
}

func decode(data []byte) (*appv1.App, bool) {
	app := &appv1.App{}
	return app, json.Unmarshal(data, app) == nil
}

// FuzzDefaulting checks that defaulting never panics, is idempotent, keeps every value the
// user set, and leaves every defaulted field filled in.
func FuzzDefaulting(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		app, ok := decode(data)
		if !ok {
			t.Skip()
		}
		before := app.DeepCopy()
		appv1.SetDefaults(app)

		once := app.DeepCopy()
		appv1.SetDefaults(app)
		if !equality.Semantic.DeepEqual(once, app) {
			t.Fatalf("defaulting twice differs from once:\n%+v\n%+v", once.Spec, app.Spec)
		}
		if app.Spec.Image != before.Spec.Image || (before.Spec.Replicas != nil && *app.Spec.Replicas != *before.Spec.Replicas) {
			t.Fatalf("defaulting changed a value the user set")
		}
		if len(before.Spec.Ports) > 0 && !equality.Semantic.DeepEqual(len(before.Spec.Ports), len(app.Spec.Ports)) {
			t.Fatalf("defaulting changed the ports the user set")
		}
		s := app.Spec
		if s.Replicas == nil || len(s.Ports) == 0 || s.Service == nil || s.Service.Enabled == nil || s.Service.Port == 0 ||
			s.SecurityContext.Pod.RunAsNonRoot == nil || s.SecurityContext.Container.AllowPrivilegeEscalation == nil {
			t.Fatalf("a defaulted field is still empty: %+v", s)
		}
		if (before.Spec.Service == nil || before.Spec.Service.TargetPort == "") && s.Service.TargetPort != s.Ports[0].Name {
			t.Fatalf("the Service does not target the first port: %q", s.Service.TargetPort)
		}
	})
}

// FuzzValidation checks that validation never panics, is deterministic, and that every error
// names a field of the App.
func FuzzValidation(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		app, ok := decode(data)
		if !ok {
			t.Skip()
		}
		errs := appv1.Validate(app)
		if again := appv1.Validate(app); errs.ToAggregate() != nil && errs.ToAggregate().Error() != again.ToAggregate().Error() {
			t.Fatalf("validation is not deterministic:\n%v\n%v", errs, again)
		}
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, "metadata.") && !strings.HasPrefix(e.Field, "spec.") {
				t.Fatalf("error names no field of the App: %q", e.Error())
			}
		}
		_ = appv1.Warnings(app)
	})
}
