package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mycompany/app-operator/internal/release/bundle"
)

// createFromManifest creates the objects of a component's release manifest, as an admin
// applying it would, but for the kinds in skip. Each Deployment in it must run one container,
// which edit points at the local cluster's images and flags first.
func (c *Cluster) createFromManifest(ctx context.Context, path string, edit func(d *unstructured.Unstructured, container map[string]any), skip ...string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := bundle.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range objs {
		if slices.Contains(skip, o.GetKind()) {
			continue
		}
		if o.GetKind() == "Deployment" {
			if err := editContainer(o, edit); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if err := c.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s of %s: %w", o.GetKind(), o.GetName(), path, err)
		}
	}
	return nil
}

// editContainer passes a Deployment's one container to edit.
func editContainer(d *unstructured.Unstructured, edit func(d *unstructured.Unstructured, container map[string]any)) error {
	containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("Deployment %s: %w", d.GetName(), err)
	}
	if len(containers) != 1 {
		return fmt.Errorf("Deployment %s: want one container, got %d", d.GetName(), len(containers))
	}
	edit(d, containers[0].(map[string]any))
	return unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
}

// Render runs a command that prints manifests (kustomize build, make deploy-manifests) and
// returns their objects; a failure says what the command printed to stderr.
func Render(cmd *exec.Cmd) ([]*unstructured.Unstructured, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", cmd, err, stderr.String())
	}
	return bundle.Decode(bytes.NewReader(out))
}
