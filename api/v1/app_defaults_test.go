package v1_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func TestSetDefaults(t *testing.T) {
	cases := []struct {
		name  string
		spec  appv1.AppSpec
		check func(t *testing.T, s appv1.AppSpec)
	}{
		{"an image alone", appv1.AppSpec{Image: "nginx"}, func(t *testing.T, s appv1.AppSpec) {
			require.Equal(t, int32(1), *s.Replicas)
			require.Equal(t, []appv1.AppPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, s.Ports)
			require.Equal(t, &appv1.ServiceSpec{Enabled: ptr.To(true), Type: corev1.ServiceTypeClusterIP, Port: 80, TargetPort: "http"}, s.Service)
			require.Nil(t, s.Autoscaling)
			require.Equal(t, &appv1.SecurityContext{
				Pod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Container: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}, s.SecurityContext)
		}},
		{"set values are kept", appv1.AppSpec{
			Image: "nginx", Replicas: ptr.To(int32(0)),
			Ports:   []appv1.AppPort{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {Name: "web", ContainerPort: 80}},
			Service: &appv1.ServiceSpec{Enabled: ptr.To(false), Type: corev1.ServiceTypeNodePort, Port: 8053},
			SecurityContext: &appv1.SecurityContext{
				Pod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)},
				Container: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}},
			},
		}, func(t *testing.T, s appv1.AppSpec) {
			require.Equal(t, int32(0), *s.Replicas, "0 is a choice, not an omission")
			require.Equal(t, corev1.ProtocolUDP, s.Ports[0].Protocol)
			require.Equal(t, corev1.ProtocolTCP, s.Ports[1].Protocol)
			require.False(t, *s.Service.Enabled)
			require.Equal(t, corev1.ServiceTypeNodePort, s.Service.Type)
			require.Equal(t, int32(8053), s.Service.Port)
			require.Equal(t, "dns", s.Service.TargetPort, "the first port")
			require.False(t, *s.SecurityContext.Pod.RunAsNonRoot)
			require.Equal(t, []corev1.Capability{"NET_BIND_SERVICE"}, s.SecurityContext.Container.Capabilities.Add)
			require.Empty(t, s.SecurityContext.Container.Capabilities.Drop, "a capabilities choice is left alone")
		}},
		{"autoscaling", appv1.AppSpec{Image: "nginx", Autoscaling: &appv1.AutoscalingSpec{MaxReplicas: 5}}, func(t *testing.T, s appv1.AppSpec) {
			require.Equal(t, &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(1)), MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr.To(int32(80))}, s.Autoscaling)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := &appv1.App{Spec: tc.spec}
			appv1.SetDefaults(app)
			tc.check(t, app.Spec)
			again := app.DeepCopy()
			appv1.SetDefaults(again)
			require.Equal(t, app, again, "defaulting is idempotent")
		})
	}
}
