package desired_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

func fullApp() *appv1.App {
	return app(func(a *appv1.App) {
		a.Spec.Replicas = ptr.To(int32(3))
		a.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}
		a.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		a.Spec.Probes = &appv1.Probes{Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}}}
		a.Spec.Autoscaling = &appv1.AutoscalingSpec{MaxReplicas: 5}
		a.Spec.DisruptionBudget = &appv1.DisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	})
}

// BenchmarkFor builds every child of an App. BenchmarkDeepCopyApp, one copy of the same App,
// is the baseline: For copies the App once to default it.
func BenchmarkFor(b *testing.B) {
	a := fullApp()
	b.ReportAllocs()
	for b.Loop() {
		_ = desired.For(a, desired.Options{})
	}
}

func BenchmarkDeepCopyApp(b *testing.B) {
	a := fullApp()
	b.ReportAllocs()
	for b.Loop() {
		_ = a.DeepCopy()
	}
}

// BenchmarkTemplateHash identifies the pod template an App asks for, as every reconcile does to
// recognise a template that was rolled back. BenchmarkFor, which builds it, is the baseline.
func BenchmarkTemplateHash(b *testing.B) {
	t := desired.For(fullApp(), desired.Options{}).Deployment.Spec.Template
	b.ReportAllocs()
	for b.Loop() {
		_ = desired.TemplateHash(&t)
	}
}
