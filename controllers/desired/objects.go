package desired

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// ContainerName is the name of the App's container in its pods.
const ContainerName = "app"

// Options carry what the builders need from the operator's environment.
type Options struct {
	// ProxyEnv are the operator's proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY),
	// passed on to the App's container unless the App sets them itself.
	ProxyEnv []corev1.EnvVar
}

// Objects are the children an App should have. A nil Service, HorizontalPodAutoscaler or
// PodDisruptionBudget is a child the App must not have.
type Objects struct {
	Deployment              *appsv1.Deployment
	Service                 *corev1.Service
	HorizontalPodAutoscaler *autoscalingv2.HorizontalPodAutoscaler
	PodDisruptionBudget     *policyv1.PodDisruptionBudget
}

// Child is one object of an App: the desired object when Wanted, or an object that only
// names the child to remove.
type Child struct {
	Object client.Object
	Wanted bool
}

// For builds every child of an App. The App is defaulted first, on a copy, so an App stored
// without defaults gets the same children as one that went through the defaulting webhook.
func For(app *appv1.App, opts Options) Objects {
	app = app.DeepCopy()
	appv1.SetDefaults(app)
	return Objects{
		Deployment:              Deployment(app, opts),
		Service:                 Service(app),
		HorizontalPodAutoscaler: HorizontalPodAutoscaler(app),
		PodDisruptionBudget:     PodDisruptionBudget(app),
	}
}

// Children lists every child kind of the App in the order they are applied: the Deployment
// first, so that the workload exists before what points at it.
func (o Objects) Children(app *appv1.App) []Child {
	name := metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}
	return []Child{
		{Object: o.Deployment, Wanted: true},
		child(o.Service, o.Service != nil, &corev1.Service{ObjectMeta: name}),
		child(o.HorizontalPodAutoscaler, o.HorizontalPodAutoscaler != nil, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: name}),
		child(o.PodDisruptionBudget, o.PodDisruptionBudget != nil, &policyv1.PodDisruptionBudget{ObjectMeta: name}),
	}
}

func child[T client.Object](desired T, wanted bool, absent T) Child {
	if wanted {
		return Child{Object: desired, Wanted: true}
	}
	return Child{Object: absent}
}

// SelectorLabels are the labels that select an App's pods. They hold only the App's
// identity, so they never change for the life of the App.
func SelectorLabels(app *appv1.App) map[string]string {
	return map[string]string{
		appv1.LabelInstance:  app.Name,
		appv1.LabelManagedBy: appv1.ManagedByValue,
	}
}

// objectMeta is the metadata every child shares: the App's name and namespace, the
// operator's labels, and the App as controller owner.
func objectMeta(app *appv1.App) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            app.Name,
		Namespace:       app.Namespace,
		Labels:          SelectorLabels(app),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(app, appv1.GroupVersion.WithKind("App"))},
	}
}
