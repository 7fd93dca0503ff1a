package localcluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Legacy is the App API's first version: stored by 0.1.0, served up to 0.5.0, and gone from
// the CRD in 1.0.0. The tests of the releases that serve it write and read it without Go
// types, which the operator no longer has.
var Legacy = schema.GroupVersionKind{Group: "mycompany.com", Version: "v1alpha1", Kind: "App"}

// LegacyApp is an App in v1alpha1's flat schema: an image and, unless zero, a replica count.
func LegacyApp(meta metav1.ObjectMeta, image string, replicas int64) *unstructured.Unstructured {
	app := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": image}}}
	if replicas > 0 {
		app.Object["spec"].(map[string]any)["replicas"] = replicas
	}
	app.SetGroupVersionKind(Legacy)
	app.SetNamespace(meta.Namespace)
	app.SetName(meta.Name)
	return app
}

// LegacyAppList is an empty list of v1alpha1 Apps.
func LegacyAppList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(Legacy.GroupVersion().WithKind("AppList"))
	return list
}
