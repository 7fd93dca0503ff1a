package image

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// DisconnectedAnnotation is OperatorHub's feature annotation for clusters without a way out:
// set to "true", the operator runs from images mirrored by digest.
const DisconnectedAnnotation = "features.operators.openshift.io/disconnected"

// RunsDisconnected checks what a ClusterServiceVersion promises when it says it runs
// disconnected: every image its Deployments run, and its containerImage, is named by digest,
// which a cluster's image digest mirrors redirect, and is listed in spec.relatedImages, which
// mirroring tools copy. Each image that is not gets an error naming its field. A
// ClusterServiceVersion that says "false", or nothing, is not checked; any other value is an
// error.
func RunsDisconnected(csv *operatorsv1alpha1.ClusterServiceVersion) error {
	switch said := csv.Annotations[DisconnectedAnnotation]; said {
	case "true":
	case "false", "":
		return nil
	default:
		return fmt.Errorf("ClusterServiceVersion %s: metadata.annotations[%s]: %q is neither \"true\" nor \"false\"", csv.Name, DisconnectedAnnotation, said)
	}
	related := map[string]bool{}
	var errs []error
	for i, r := range csv.Spec.RelatedImages {
		related[r.Image] = true
		if !namedByDigest(r.Image) {
			errs = append(errs, fmt.Errorf("spec.relatedImages[%d].image: %q is not named by digest", i, r.Image))
		}
	}
	check := func(field, image string) {
		switch {
		case !namedByDigest(image):
			errs = append(errs, fmt.Errorf("%s: %q is not named by digest", field, image))
		case !related[image]:
			errs = append(errs, fmt.Errorf("%s: %q is not in spec.relatedImages", field, image))
		}
	}
	if image, ok := csv.Annotations["containerImage"]; ok {
		check("metadata.annotations.containerImage", image)
	}
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, group := range []struct {
			field      string
			containers []corev1.Container
		}{{"initContainers", pod.InitContainers}, {"containers", pod.Containers}} {
			for j, c := range group.containers {
				check(fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.%s[%d].image", i, group.field, j), c.Image)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("ClusterServiceVersion %s says %s: \"true\", which needs every image it runs named by digest and listed in spec.relatedImages:\n%w",
			csv.Name, DisconnectedAnnotation, errors.Join(errs...))
	}
	return nil
}

// runsDisconnected is RunsDisconnected of a ClusterServiceVersion read as a map.
func runsDisconnected(csv map[string]any) error {
	raw, err := json.Marshal(csv)
	if err != nil {
		return err
	}
	typed := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal(raw, typed); err != nil {
		return err
	}
	return RunsDisconnected(typed)
}

// namedByDigest reports whether ref names an image by digest (repo@sha256:...), not by tag.
func namedByDigest(ref string) bool {
	_, err := name.NewDigest(ref)
	return err == nil
}
