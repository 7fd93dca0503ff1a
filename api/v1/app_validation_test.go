package v1_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func validApp() *appv1.App {
	a := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appv1.AppSpec{
			Image: "registry.example.com/team/web:1.2.3",
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Probes: &appv1.Probes{Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}}},
			Autoscaling:      &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 5},
			DisruptionBudget: &appv1.DisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))},
			Rollout:          &appv1.RolloutSpec{MaxSurge: ptr.To(intstr.FromString("25%")), MaxUnavailable: ptr.To(intstr.FromInt32(0))},
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			},
			PodLabels: map[string]string{"team": "shop"},
		},
	}
	appv1.SetDefaults(a)
	return a
}

func TestValidAppsPass(t *testing.T) {
	for _, image := range []string{"nginx", "nginx:1.27", "docker.io/library/nginx:1.27",
		"registry.example.com:5000/team/web@sha256:" + strings.Repeat("a", 64), "localhost/web"} {
		a := validApp()
		a.Spec.Image = image
		require.Empty(t, appv1.Validate(a), image)
	}
	require.Empty(t, appv1.Validate(&appv1.App{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appv1.AppSpec{Image: "nginx"}}),
		"an App without defaults is valid too")
}

func TestValidateNamesEachField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*appv1.App)
		fields []string
	}{
		{"no image", func(a *appv1.App) { a.Spec.Image = "" }, []string{"spec.image"}},
		{"bad image", func(a *appv1.App) { a.Spec.Image = "nginx@sha256:short" }, []string{"spec.image"}},
		{"image with spaces", func(a *appv1.App) { a.Spec.Image = "nginx latest" }, []string{"spec.image"}},
		{"negative replicas", func(a *appv1.App) { a.Spec.Replicas = ptr.To(int32(-1)) }, []string{"spec.replicas"}},
		{"name not DNS-1035", func(a *appv1.App) { a.Name = "Web" }, []string{"metadata.name"}},
		{"name too long", func(a *appv1.App) { a.Name = strings.Repeat("w", 64) }, []string{"metadata.name"}},
		{"env without a name", func(a *appv1.App) { a.Spec.Env = []corev1.EnvVar{{Value: "x"}} }, []string{"spec.env[0].name"}},
		{"env with value and valueFrom", func(a *appv1.App) {
			a.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{}}}
		}, []string{"spec.env[0].valueFrom"}},
		{"port out of range", func(a *appv1.App) { a.Spec.Ports[0].ContainerPort = 70000 }, []string{"spec.ports[0].containerPort"}},
		{"port zero", func(a *appv1.App) { a.Spec.Ports[0].ContainerPort = 0 }, []string{"spec.ports[0].containerPort"}},
		{"duplicate port name", func(a *appv1.App) {
			a.Spec.Ports = append(a.Spec.Ports, appv1.AppPort{Name: "http", ContainerPort: 9090})
		}, []string{"spec.ports[1].name"}},
		{"duplicate port number", func(a *appv1.App) {
			a.Spec.Ports = append(a.Spec.Ports, appv1.AppPort{Name: "alt", ContainerPort: 8080, Protocol: corev1.ProtocolTCP})
		}, []string{"spec.ports[1].containerPort"}},
		{"unknown protocol", func(a *appv1.App) { a.Spec.Ports[0].Protocol = "ICMP" }, []string{"spec.ports[0].protocol"}},
		{"unknown service type", func(a *appv1.App) { a.Spec.Service.Type = "ExternalName" }, []string{"spec.service.type"}},
		{"service port out of range", func(a *appv1.App) { a.Spec.Service.Port = -1 }, []string{"spec.service.port"}},
		{"service target unknown", func(a *appv1.App) { a.Spec.Service.TargetPort = "grpc" }, []string{"spec.service.targetPort"}},
		{"service annotation key invalid", func(a *appv1.App) { a.Spec.Service.Annotations = map[string]string{"a b": "c"} }, []string{"spec.service.annotations"}},
		{"negative request", func(a *appv1.App) { a.Spec.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("-1") }, []string{"spec.resources.requests[memory]"}},
		{"probe without a handler", func(a *appv1.App) { a.Spec.Probes.Readiness.HTTPGet = nil }, []string{"spec.probes.readiness"}},
		{"probe with two handlers", func(a *appv1.App) {
			a.Spec.Probes.Readiness.Exec = &corev1.ExecAction{Command: []string{"true"}}
		}, []string{"spec.probes.readiness"}},
		{"probe port out of range", func(a *appv1.App) { a.Spec.Probes.Readiness.HTTPGet.Port = intstr.FromInt32(0) }, []string{"spec.probes.readiness.port"}},
		{"negative probe period", func(a *appv1.App) { a.Spec.Probes.Readiness.PeriodSeconds = -5 }, []string{"spec.probes.readiness.periodSeconds"}},
		{"autoscaling min above max", func(a *appv1.App) { a.Spec.Autoscaling.MinReplicas = ptr.To(int32(9)) }, []string{"spec.autoscaling.minReplicas"}},
		{"autoscaling max zero", func(a *appv1.App) { a.Spec.Autoscaling.MaxReplicas = 0 }, []string{"spec.autoscaling.maxReplicas"}},
		{"autoscaling target zero", func(a *appv1.App) { a.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To(int32(0)) }, []string{"spec.autoscaling.targetCPUUtilizationPercentage"}},
		{"budget with neither field", func(a *appv1.App) { a.Spec.DisruptionBudget.MinAvailable = nil }, []string{"spec.disruptionBudget"}},
		{"budget percentage malformed", func(a *appv1.App) { a.Spec.DisruptionBudget.MinAvailable = ptr.To(intstr.FromString("half")) }, []string{"spec.disruptionBudget.minAvailable"}},
		{"budget negative", func(a *appv1.App) { a.Spec.DisruptionBudget.MinAvailable = ptr.To(intstr.FromInt32(-1)) }, []string{"spec.disruptionBudget.minAvailable"}},
		{"rollout that cannot progress", func(a *appv1.App) { a.Spec.Rollout.MaxSurge = ptr.To(intstr.FromString("0%")) }, []string{"spec.rollout.maxUnavailable"}},
		{"rollout deadline zero", func(a *appv1.App) { a.Spec.Rollout.ProgressDeadlineSeconds = ptr.To(int32(0)) }, []string{"spec.rollout.progressDeadlineSeconds"}},
		{"service account name invalid", func(a *appv1.App) { a.Spec.ServiceAccountName = "a/b" }, []string{"spec.serviceAccountName"}},
		{"pull secret without a name", func(a *appv1.App) { a.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}} }, []string{"spec.imagePullSecrets[0].name"}},
		{"node selector key invalid", func(a *appv1.App) { a.Spec.NodeSelector = map[string]string{"-bad": "x"} }, []string{"spec.nodeSelector"}},
		{"pod label value too long", func(a *appv1.App) { a.Spec.PodLabels = map[string]string{"team": strings.Repeat("x", 64)} }, []string{"spec.podLabels"}},
		{"reserved pod label", func(a *appv1.App) { a.Spec.PodLabels = map[string]string{appv1.LabelManagedBy: "me"} }, []string{"spec.podLabels[app.kubernetes.io/managed-by]"}},
		{"pod annotation key invalid", func(a *appv1.App) { a.Spec.PodAnnotations = map[string]string{"": "x"} }, []string{"spec.podAnnotations"}},
		{"several at once", func(a *appv1.App) {
			a.Spec.Image = ""
			a.Spec.Replicas = ptr.To(int32(-3))
			a.Spec.Autoscaling.MaxReplicas = 0
		}, []string{"spec.image", "spec.replicas", "spec.autoscaling.maxReplicas"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := validApp()
			tc.mutate(a)
			errs := appv1.Validate(a)
			for _, f := range tc.fields {
				found := false
				for _, e := range errs {
					found = found || strings.HasPrefix(e.Field, f)
				}
				require.Truef(t, found, "no error names %s: %v", f, errs)
			}
			for _, e := range errs {
				named := false
				for _, f := range tc.fields {
					named = named || strings.HasPrefix(e.Field, f)
				}
				require.Truef(t, named, "unexpected error %q", e.Error())
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	a := validApp()
	require.Empty(t, appv1.Warnings(a))

	a.Spec.Replicas = ptr.To(int32(3))
	a.Spec.Resources = nil
	a.Spec.SecurityContext.Pod.RunAsNonRoot = ptr.To(false)
	a.Spec.SecurityContext.Container.Privileged = ptr.To(true)
	w := strings.Join(appv1.Warnings(a), "\n")
	for _, s := range []string{"spec.replicas is ignored", "runAsNonRoot=false", "privileged=true", "needs spec.resources.requests.cpu"} {
		require.Contains(t, w, s)
	}
}
