package desired

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// Service builds the Service in front of a defaulted App's pods, or returns nil when the App
// disables its Service.
func Service(app *appv1.App) *corev1.Service {
	s := &app.Spec
	if !s.ServiceEnabled() {
		return nil
	}
	svc := s.Service
	protocol := appv1.DefaultPortProtocol
	for _, p := range s.Ports {
		if p.Name == svc.TargetPort && p.Protocol != "" {
			protocol = p.Protocol
		}
	}
	meta := objectMeta(app)
	meta.Annotations = svc.Annotations
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     svc.Type,
			Selector: SelectorLabels(app),
			Ports: []corev1.ServicePort{{
				Name:       svc.TargetPort,
				Port:       svc.Port,
				TargetPort: intstr.FromString(svc.TargetPort),
				Protocol:   protocol,
			}},
		},
	}
}
