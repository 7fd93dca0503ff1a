package desired

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// Deployment builds the Deployment that runs a defaulted App's pods. While autoscaling is set
// it leaves replicas unset, so that the HorizontalPodAutoscaler owns them.
func Deployment(app *appv1.App, opts Options) *appsv1.Deployment {
	s := &app.Spec
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(app),
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(app)},
			Template: podTemplate(app, opts),
		},
	}
	if s.Autoscaling == nil {
		d.Spec.Replicas = s.Replicas
	}
	if r := s.Rollout; r != nil {
		d.Spec.ProgressDeadlineSeconds = r.ProgressDeadlineSeconds
		if r.MaxSurge != nil || r.MaxUnavailable != nil {
			d.Spec.Strategy = appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: r.MaxSurge, MaxUnavailable: r.MaxUnavailable},
			}
		}
	}
	return d
}

func podTemplate(app *appv1.App, opts Options) corev1.PodTemplateSpec {
	s := &app.Spec
	labels := map[string]string{}
	for k, v := range s.PodLabels {
		labels[k] = v
	}
	for k, v := range SelectorLabels(app) {
		labels[k] = v
	}
	t := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: s.PodAnnotations},
		Spec: corev1.PodSpec{
			Containers:         []corev1.Container{container(s, opts)},
			ServiceAccountName: s.ServiceAccountName,
			ImagePullSecrets:   s.ImagePullSecrets,
			NodeSelector:       s.NodeSelector,
			Tolerations:        s.Tolerations,
			Affinity:           s.Affinity,
		},
	}
	if s.SecurityContext != nil {
		t.Spec.SecurityContext = s.SecurityContext.Pod
	}
	return t
}

func container(s *appv1.AppSpec, opts Options) corev1.Container {
	c := corev1.Container{
		Name:    ContainerName,
		Image:   s.Image,
		Command: s.Command,
		Args:    s.Args,
		Env:     withProxyEnv(s.Env, opts.ProxyEnv),
		EnvFrom: s.EnvFrom,
	}
	for _, p := range s.Ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: p.Protocol})
	}
	if s.Resources != nil {
		c.Resources = *s.Resources
	}
	if p := s.Probes; p != nil {
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = p.Liveness, p.Readiness, p.Startup
	}
	if s.SecurityContext != nil {
		c.SecurityContext = s.SecurityContext.Container
	}
	return c
}

// withProxyEnv appends the operator's proxy variables that the App does not set itself.
func withProxyEnv(env, proxy []corev1.EnvVar) []corev1.EnvVar {
	set := map[string]bool{}
	for _, e := range env {
		set[e.Name] = true
	}
	out := append([]corev1.EnvVar(nil), env...)
	for _, e := range proxy {
		if !set[e.Name] {
			out = append(out, e)
		}
	}
	return out
}
