package operator

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/desired"
)

// CacheOptions keep the cache small: no managedFields on any object, no copy of an App's last
// kubectl apply, only the children that carry the operator's label, and of each child only
// what the reconciler reads (SlimChild). Every syncPeriod, every cached object is handed to
// the controller again. With namespaces, the cache holds the objects of those namespaces
// only, as the operator's Roles there allow; without, of every namespace.
func CacheOptions(syncPeriod time.Duration, namespaces []string) cache.Options {
	child := cache.ByObject{
		Label:     labels.SelectorFromSet(labels.Set{appv1.LabelManagedBy: appv1.ManagedByValue}),
		Transform: SlimChild,
	}
	var scoped map[string]cache.Config
	if len(namespaces) > 0 {
		scoped = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			scoped[ns] = cache.Config{}
		}
	}
	byObject := map[client.Object]cache.ByObject{&appv1.App{}: {Transform: TrimApp}}
	for _, c := range children() {
		byObject[c] = child
	}
	return cache.Options{
		DefaultNamespaces: scoped,
		SyncPeriod:        &syncPeriod,
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject:          byObject,
	}
}

// children are the kinds of an App's children, which the controller watches.
func children() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{}}
}

// watched are the kinds the controller watches, each in the cache: the App and its children.
func watched() []client.Object { return append([]client.Object{&appv1.App{}}, children()...) }

// lastApplied is the annotation in which kubectl apply keeps a copy of the whole object.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimApp drops from a cached App what the operator never reads: its managedFields, and the
// copy of its spec that a client-side kubectl apply keeps in an annotation, which would
// double the App in the cache. The operator writes only an App's status, with a patch of the
// status alone, so nothing dropped is ever written back. The strings Apps share are interned.
func TrimApp(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a[lastApplied] != "" {
			delete(a, lastApplied)
			o.SetAnnotations(a)
		}
	}
	if app, ok := obj.(*appv1.App); ok {
		internApp(app)
	}
	return obj, nil
}

// SlimChild keeps of a child what the reconciler reads from the cache: its identity, owner and
// deletion, the hashes that tell whether it is still as the operator applied it
// (apply.OwnedHashAnnotation), and of a Deployment its replicas, its containers' images, its
// pod template's hash (desired.TemplateHashAnnotation) and its status. Everything else, the
// spec the API server defaulted above all, is read from the API server on the rare reconcile
// that needs it: when a child changed, or a rollout is rolled back. The operator applies
// children from the App alone, so nothing dropped is ever written back. The strings children
// share are interned.
//
// Informers may hand an object to their transform twice (client-go transforms a listed
// object in its queue's Replace and again in its store's), so SlimChild leaves a child it
// slimmed already as it is: one without managedFields, which every object the API server
// sends has.
func SlimChild(obj any) (any, error) {
	full, ok := obj.(client.Object)
	if !ok {
		return obj, nil
	}
	if _, slim := full.GetAnnotations()[apply.OwnedHashAnnotation]; slim && len(full.GetManagedFields()) == 0 {
		return obj, nil
	}
	annotations := map[string]string{apply.OwnedHashAnnotation: apply.OwnedHash(full)}
	if hash, ok := full.GetAnnotations()[apply.HashAnnotation]; ok {
		annotations[apply.HashAnnotation] = hash
	}
	meta := metav1.ObjectMeta{
		Name: full.GetName(), Namespace: full.GetNamespace(), UID: full.GetUID(),
		ResourceVersion: full.GetResourceVersion(), Generation: full.GetGeneration(),
		CreationTimestamp: full.GetCreationTimestamp(), DeletionTimestamp: full.GetDeletionTimestamp(),
		OwnerReferences: full.GetOwnerReferences(), Annotations: annotations,
	}
	internMeta(&meta)
	// Each child is slimmed where it was decoded, so that the cache keeps the decoder's object
	// rather than a copy allocated beside it.
	switch o := full.(type) {
	case *appsv1.Deployment:
		annotations[desired.TemplateHashAnnotation] = desired.TemplateHash(&o.Spec.Template)
		replicas, containers := o.Spec.Replicas, make([]corev1.Container, len(o.Spec.Template.Spec.Containers))
		for i, c := range o.Spec.Template.Spec.Containers {
			containers[i] = corev1.Container{Name: c.Name, Image: c.Image}
		}
		*o = appsv1.Deployment{ObjectMeta: meta, Status: o.Status}
		o.Spec.Replicas = replicas
		o.Spec.Template.Spec.Containers = containers
		internDeployment(o)
		return o, nil
	case *corev1.Service:
		*o = corev1.Service{ObjectMeta: meta}
		return o, nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		*o = autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta}
		return o, nil
	case *policyv1.PodDisruptionBudget:
		*o = policyv1.PodDisruptionBudget{ObjectMeta: meta}
		return o, nil
	}
	full.SetManagedFields(nil)
	return full, nil
}
