package v1alpha1

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "github.com/mycompany/app-operator/api/v1"
)

// ConversionDataAnnotation carries, on a v1alpha1 App, the v1 fields that v1alpha1 cannot
// hold, so that v1 -> v1alpha1 -> v1 loses nothing. Conversion to v1 consumes it.
const ConversionDataAnnotation = "mycompany.com/v1-conversion-data"

// hubOnly is the part of a v1 App that has no v1alpha1 field.
type hubOnly struct {
	Spec   v1.AppSpec   `json:"spec,omitempty"`
	Status v1.AppStatus `json:"status,omitempty"`
}

// ConvertTo converts this v1alpha1 App to the v1 hub, restoring the v1-only fields kept in
// ConversionDataAnnotation.
func (src *App) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1.App)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()

	var restored hubOnly
	if raw, ok := dst.Annotations[ConversionDataAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &restored); err != nil {
			return fmt.Errorf("metadata.annotations[%s]: cannot restore v1 fields: %w", ConversionDataAnnotation, err)
		}
	}
	dropConversionData(&dst.ObjectMeta)
	dst.Spec = restored.Spec
	dst.Status = restored.Status

	// The fields v1alpha1 holds always win: a v1alpha1 client may have changed them.
	dst.Spec.Image = src.Spec.Image
	dst.Spec.Replicas = copyInt32(src.Spec.Replicas)
	dst.Status.AvailableReplicas = src.Status.AvailableReplicas
	return nil
}

// ConvertFrom converts the v1 hub to this v1alpha1 App, keeping the fields v1alpha1 cannot
// hold in ConversionDataAnnotation.
func (dst *App) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1.App)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	dst.Spec = AppSpec{Image: src.Spec.Image, Replicas: copyInt32(src.Spec.Replicas)}
	dst.Status = AppStatus{AvailableReplicas: src.Status.AvailableReplicas}

	rest := hubOnly{Spec: *src.Spec.DeepCopy(), Status: *src.Status.DeepCopy()}
	rest.Spec.Image, rest.Spec.Replicas, rest.Status.AvailableReplicas = "", nil, 0
	if equality.Semantic.DeepEqual(rest, hubOnly{}) {
		dropConversionData(&dst.ObjectMeta)
		return nil
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return fmt.Errorf("cannot keep v1 fields in metadata.annotations[%s]: %w", ConversionDataAnnotation, err)
	}
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[ConversionDataAnnotation] = string(raw)
	return nil
}

func dropConversionData(meta *metav1.ObjectMeta) {
	delete(meta.Annotations, ConversionDataAnnotation)
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
