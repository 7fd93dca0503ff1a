package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Default values of an App's optional fields.
const (
	DefaultReplicas          int32 = 1
	DefaultPortName                = "http"
	DefaultContainerPort     int32 = 8080
	DefaultServicePort       int32 = 80
	DefaultMinReplicas       int32 = 1
	DefaultTargetCPUPercent  int32 = 80
	DefaultServiceType             = corev1.ServiceTypeClusterIP
	DefaultPortProtocol            = corev1.ProtocolTCP
	restrictedCapabilityDrop       = "ALL"
)

// SetDefaults fills the optional fields of an App that are left empty. It is idempotent and
// never overrides a value the user set. The security defaults satisfy the restricted Pod
// Security Standard.
func SetDefaults(app *App) {
	s := &app.Spec
	if s.Replicas == nil {
		s.Replicas = ptr.To(DefaultReplicas)
	}
	if len(s.Ports) == 0 {
		s.Ports = []AppPort{{Name: DefaultPortName, ContainerPort: DefaultContainerPort}}
	}
	for i := range s.Ports {
		if s.Ports[i].Protocol == "" {
			s.Ports[i].Protocol = DefaultPortProtocol
		}
	}
	defaultService(s)
	if a := s.Autoscaling; a != nil {
		if a.MinReplicas == nil {
			a.MinReplicas = ptr.To(DefaultMinReplicas)
		}
		if a.TargetCPUUtilizationPercentage == nil {
			a.TargetCPUUtilizationPercentage = ptr.To(DefaultTargetCPUPercent)
		}
	}
	defaultSecurityContext(s)
}

func defaultService(s *AppSpec) {
	if s.Service == nil {
		s.Service = &ServiceSpec{}
	}
	svc := s.Service
	if svc.Enabled == nil {
		svc.Enabled = ptr.To(true)
	}
	if svc.Type == "" {
		svc.Type = DefaultServiceType
	}
	if svc.Port == 0 {
		svc.Port = DefaultServicePort
	}
	if svc.TargetPort == "" {
		svc.TargetPort = s.Ports[0].Name
	}
}

func defaultSecurityContext(s *AppSpec) {
	if s.SecurityContext == nil {
		s.SecurityContext = &SecurityContext{}
	}
	if s.SecurityContext.Pod == nil {
		s.SecurityContext.Pod = &corev1.PodSecurityContext{}
	}
	pod := s.SecurityContext.Pod
	if pod.RunAsNonRoot == nil {
		pod.RunAsNonRoot = ptr.To(true)
	}
	if pod.SeccompProfile == nil {
		pod.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}

	if s.SecurityContext.Container == nil {
		s.SecurityContext.Container = &corev1.SecurityContext{}
	}
	c := s.SecurityContext.Container
	if c.AllowPrivilegeEscalation == nil {
		c.AllowPrivilegeEscalation = ptr.To(false)
	}
	if c.Capabilities == nil {
		c.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{restrictedCapabilityDrop}}
	}
}

// ServiceEnabled reports whether the App wants a Service; a Service is the default.
func (s *AppSpec) ServiceEnabled() bool {
	return s.Service == nil || s.Service.Enabled == nil || *s.Service.Enabled
}
