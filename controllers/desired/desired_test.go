package desired_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

func app(mutate ...func(*appv1.App)) *appv1.App {
	a := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
		Spec:       appv1.AppSpec{Image: "registry.example.com/web:1.0"},
	}
	for _, m := range mutate {
		m(a)
	}
	return a
}

var selector = map[string]string{
	"app.kubernetes.io/instance":   "web",
	"app.kubernetes.io/managed-by": "app-operator",
}

func TestObjectsShareIdentityAndOwner(t *testing.T) {
	objs := desired.For(app(func(a *appv1.App) {
		a.Spec.Autoscaling = &appv1.AutoscalingSpec{MaxReplicas: 3}
		a.Spec.DisruptionBudget = &appv1.DisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}
	}), desired.Options{})
	children := objs.Children(app())
	require.Len(t, children, 4)
	for _, c := range children {
		require.True(t, c.Wanted)
		o := c.Object
		require.Equal(t, "web", o.GetName())
		require.Equal(t, "shop", o.GetNamespace())
		require.Equal(t, selector, o.GetLabels())
		require.Len(t, o.GetOwnerReferences(), 1)
		ref := o.GetOwnerReferences()[0]
		require.Equal(t, metav1.OwnerReference{APIVersion: "mycompany.com/v1", Kind: "App", Name: "web", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}, ref)
	}
}

func TestChildrenNotWantedAreNamedForRemoval(t *testing.T) {
	a := app(func(a *appv1.App) { a.Spec.Service = &appv1.ServiceSpec{Enabled: ptr.To(false)} })
	children := desired.For(a, desired.Options{}).Children(a)
	require.True(t, children[0].Wanted, "the Deployment is always wanted")
	for _, c := range children[1:] {
		require.False(t, c.Wanted, "%T", c.Object)
		require.Equal(t, "web", c.Object.GetName())
		require.Equal(t, "shop", c.Object.GetNamespace())
	}
	require.IsType(t, &corev1.Service{}, children[1].Object)
	require.IsType(t, &autoscalingv2.HorizontalPodAutoscaler{}, children[2].Object)
	require.IsType(t, &policyv1.PodDisruptionBudget{}, children[3].Object)
}

func TestDeployment(t *testing.T) {
	proxy := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}, {Name: "NO_PROXY", Value: ".svc"}}
	cases := []struct {
		name  string
		app   *appv1.App
		check func(t *testing.T, d *appsv1.Deployment)
	}{
		{"defaults", app(), func(t *testing.T, d *appsv1.Deployment) {
			require.Equal(t, int32(1), *d.Spec.Replicas)
			require.Equal(t, selector, d.Spec.Selector.MatchLabels)
			require.Equal(t, selector, d.Spec.Template.Labels)
			c := d.Spec.Template.Spec.Containers[0]
			require.Equal(t, "app", c.Name)
			require.Equal(t, "registry.example.com/web:1.0", c.Image)
			require.Equal(t, []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, c.Ports)
			require.Equal(t, proxy, c.Env, "the operator's proxy settings pass on")
			require.True(t, *d.Spec.Template.Spec.SecurityContext.RunAsNonRoot)
			require.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
			require.Equal(t, appsv1.DeploymentStrategy{}, d.Spec.Strategy, "the API server's default strategy")
		}},
		{"replicas are left to the autoscaler", app(func(a *appv1.App) {
			a.Spec.Replicas = ptr.To(int32(4))
			a.Spec.Autoscaling = &appv1.AutoscalingSpec{MaxReplicas: 8}
		}), func(t *testing.T, d *appsv1.Deployment) {
			require.Nil(t, d.Spec.Replicas)
		}},
		{"the App's env wins over the proxy settings", app(func(a *appv1.App) {
			a.Spec.Env = []corev1.EnvVar{{Name: "NO_PROXY", Value: "*"}, {Name: "MODE", Value: "prod"}}
		}), func(t *testing.T, d *appsv1.Deployment) {
			require.Equal(t, []corev1.EnvVar{{Name: "NO_PROXY", Value: "*"}, {Name: "MODE", Value: "prod"},
				{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}}, d.Spec.Template.Spec.Containers[0].Env)
		}},
		{"pod labels cannot move the selector", app(func(a *appv1.App) {
			a.Spec.PodLabels = map[string]string{"team": "shop", "app.kubernetes.io/instance": "other"}
			a.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true"}
		}), func(t *testing.T, d *appsv1.Deployment) {
			require.Equal(t, "shop", d.Spec.Template.Labels["team"])
			require.Equal(t, "web", d.Spec.Template.Labels["app.kubernetes.io/instance"])
			require.Equal(t, selector, d.Spec.Selector.MatchLabels)
			require.Equal(t, map[string]string{"prometheus.io/scrape": "true"}, d.Spec.Template.Annotations)
		}},
		{"the selector never holds the image", app(func(a *appv1.App) { a.Spec.Image = "registry.example.com/web:2.0" }),
			func(t *testing.T, d *appsv1.Deployment) {
				require.Equal(t, selector, d.Spec.Selector.MatchLabels)
			}},
		{"rollout settings", app(func(a *appv1.App) {
			a.Spec.Rollout = &appv1.RolloutSpec{MaxSurge: ptr.To(intstr.FromString("50%")), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				ProgressDeadlineSeconds: ptr.To(int32(120))}
		}), func(t *testing.T, d *appsv1.Deployment) {
			require.Equal(t, appsv1.RollingUpdateDeploymentStrategyType, d.Spec.Strategy.Type)
			require.Equal(t, intstr.FromString("50%"), *d.Spec.Strategy.RollingUpdate.MaxSurge)
			require.Equal(t, intstr.FromInt32(0), *d.Spec.Strategy.RollingUpdate.MaxUnavailable)
			require.Equal(t, int32(120), *d.Spec.ProgressDeadlineSeconds)
		}},
		{"pod settings", app(func(a *appv1.App) {
			a.Spec.Command = []string{"/serve"}
			a.Spec.Args = []string{"--port=8080"}
			a.Spec.ServiceAccountName = "web"
			a.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
			a.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			a.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
			a.Spec.Probes = &appv1.Probes{Liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}}
			a.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		}), func(t *testing.T, d *appsv1.Deployment) {
			p := d.Spec.Template.Spec
			c := p.Containers[0]
			require.Equal(t, []string{"/serve"}, c.Command)
			require.Equal(t, []string{"--port=8080"}, c.Args)
			require.Equal(t, "web", p.ServiceAccountName)
			require.Equal(t, "pull", p.ImagePullSecrets[0].Name)
			require.Equal(t, "ssd", p.NodeSelector["disk"])
			require.Equal(t, "dedicated", p.Tolerations[0].Key)
			require.Equal(t, intstr.FromString("http"), c.LivenessProbe.TCPSocket.Port)
			require.Nil(t, c.ReadinessProbe)
			require.Equal(t, "100m", c.Resources.Requests.Cpu().String())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.app.DeepCopy()
			d := desired.For(tc.app, desired.Options{ProxyEnv: proxy}).Deployment
			require.Equal(t, before, tc.app, "building never changes the App")
			tc.check(t, d)
		})
	}
}

func TestService(t *testing.T) {
	cases := []struct {
		name string
		app  *appv1.App
		want *corev1.ServiceSpec
	}{
		{"defaults", app(), &corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: selector,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
		}},
		{"a chosen port of a chosen type", app(func(a *appv1.App) {
			a.Spec.Ports = []appv1.AppPort{{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}, {Name: "metrics", ContainerPort: 9090}}
			a.Spec.Service = &appv1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Port: 53, TargetPort: "dns"}
		}), &corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Selector: selector,
			Ports: []corev1.ServicePort{{Name: "dns", Port: 53, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP}},
		}},
		{"disabled", app(func(a *appv1.App) { a.Spec.Service = &appv1.ServiceSpec{Enabled: ptr.To(false)} }), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := desired.For(tc.app, desired.Options{}).Service
			if tc.want == nil {
				require.Nil(t, svc)
				return
			}
			require.Equal(t, *tc.want, svc.Spec)
		})
	}

	svc := desired.For(app(func(a *appv1.App) {
		a.Spec.Service = &appv1.ServiceSpec{Annotations: map[string]string{"lb": "internal"}}
	}), desired.Options{}).Service
	require.Equal(t, map[string]string{"lb": "internal"}, svc.Annotations)
}

func TestHorizontalPodAutoscaler(t *testing.T) {
	require.Nil(t, desired.For(app(), desired.Options{}).HorizontalPodAutoscaler)

	hpa := desired.For(app(func(a *appv1.App) { a.Spec.Autoscaling = &appv1.AutoscalingSpec{MaxReplicas: 10} }),
		desired.Options{}).HorizontalPodAutoscaler
	require.Equal(t, autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    ptr.To(int32(1)),
		MaxReplicas:    10,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(80))},
		}}},
	}, hpa.Spec)
}

func TestPodDisruptionBudget(t *testing.T) {
	require.Nil(t, desired.For(app(), desired.Options{}).PodDisruptionBudget)

	for _, budget := range []appv1.DisruptionBudgetSpec{
		{MinAvailable: ptr.To(intstr.FromString("50%"))},
		{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
	} {
		pdb := desired.For(app(func(a *appv1.App) { a.Spec.DisruptionBudget = &budget }), desired.Options{}).PodDisruptionBudget
		require.Equal(t, policyv1.PodDisruptionBudgetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector}, MinAvailable: budget.MinAvailable, MaxUnavailable: budget.MaxUnavailable,
		}, pdb.Spec)
	}
}
