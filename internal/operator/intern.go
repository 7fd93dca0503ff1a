package operator

import (
	"slices"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// The decoder gives every cached object its own copy of every string, and most of an App's
// strings are the same in every App: the namespace, the image, the defaults, the conditions'
// types, reasons and messages. The cache's transforms replace those with one shared copy
// (unique.Make), which takes about a quarter off a cached App (BenchmarkCachedApp). Values
// stay as they are: only where their bytes live changes. A shared copy lives as long as an
// object holds it; one that is dropped is made again, so objects decoded far apart in time
// may hold copies of their own, never a wrong value.

// intern points *s at the shared copy of its value.
func intern[S ~string](s *S) {
	*s = S(unique.Make(string(*s)).Value())
}

// internApp interns the strings an App shares with other Apps, and trims its conditions'
// slice to their number (the decoder grows it by doubling).
func internApp(app *appv1.App) {
	intern(&app.Namespace)
	s := &app.Spec
	intern(&s.Image)
	for i := range s.Ports {
		intern(&s.Ports[i].Name)
		intern(&s.Ports[i].Protocol)
	}
	if svc := s.Service; svc != nil {
		intern(&svc.Type)
		intern(&svc.TargetPort)
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		intern(&t.Key)
		intern(&t.Operator)
		intern(&t.Value)
		intern(&t.Effect)
	}
	if sc := s.SecurityContext; sc != nil {
		if sc.Pod != nil && sc.Pod.SeccompProfile != nil {
			intern(&sc.Pod.SeccompProfile.Type)
		}
		if sc.Container != nil && sc.Container.Capabilities != nil {
			for i := range sc.Container.Capabilities.Drop {
				intern(&sc.Container.Capabilities.Drop[i])
			}
		}
	}
	st := &app.Status
	intern(&st.Image)
	if len(st.Conditions) > 0 && cap(st.Conditions) > len(st.Conditions) {
		st.Conditions = slices.Clone(st.Conditions)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		intern(&c.Type)
		intern(&c.Status)
		intern(&c.Reason)
		intern(&c.Message)
	}
}

// internMeta interns the strings a child's metadata shares with other Apps' children.
func internMeta(meta *metav1.ObjectMeta) {
	intern(&meta.Namespace)
	for i := range meta.OwnerReferences {
		intern(&meta.OwnerReferences[i].APIVersion)
		intern(&meta.OwnerReferences[i].Kind)
	}
}

// internDeployment interns the strings of what the cache keeps of a Deployment's containers
// and status that other Apps' Deployments share.
func internDeployment(d *appsv1.Deployment) {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		intern(&c.Name)
		intern(&c.Image)
	}
	for i := range d.Status.Conditions {
		c := &d.Status.Conditions[i]
		intern(&c.Type)
		intern(&c.Status)
		intern(&c.Reason)
		intern(&c.Message)
	}
}
