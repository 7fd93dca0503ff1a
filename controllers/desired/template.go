package desired

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TemplateHash identifies a pod template by its content. It ignores the pod-template-hash
// label, which the Deployment controller adds to its ReplicaSets' copies, so a Deployment's
// template and the template of its ReplicaSet hash alike.
func TemplateHash(t *corev1.PodTemplateSpec) string {
	if _, ok := t.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		t = WithoutReplicaSetLabel(t)
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return "" // a PodTemplateSpec always marshals
	}
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return strconv.FormatUint(h.Sum64(), 36)
}

// TemplateHashAnnotation exists only in the operator's cache, never on the API server: a
// Deployment kept there without its pod template carries the template's TemplateHash in it.
const TemplateHashAnnotation = "cache.mycompany.com/template-hash"

// DeploymentTemplateHash is the TemplateHash of a Deployment's pod template, read from
// TemplateHashAnnotation when the cache keeps the Deployment without its template.
func DeploymentTemplateHash(d *appsv1.Deployment) string {
	if hash, ok := d.Annotations[TemplateHashAnnotation]; ok {
		return hash
	}
	return TemplateHash(&d.Spec.Template)
}

// WithoutReplicaSetLabel returns a copy of a ReplicaSet's pod template as its Deployment
// holds it: without the pod-template-hash label.
func WithoutReplicaSetLabel(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	t = t.DeepCopy()
	delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return t
}
