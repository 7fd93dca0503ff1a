package desired

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// HorizontalPodAutoscaler builds the autoscaler of a defaulted App's Deployment, or returns
// nil when the App does not autoscale.
func HorizontalPodAutoscaler(app *appv1.App) *autoscalingv2.HorizontalPodAutoscaler {
	a := app.Spec.Autoscaling
	if a == nil {
		return nil
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: objectMeta(app),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: app.Name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{
						Type:               autoscalingv2.UtilizationMetricType,
						AverageUtilization: a.TargetCPUUtilizationPercentage,
					},
				},
			}},
		},
	}
}
