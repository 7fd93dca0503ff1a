// Package bundle checks the committed OLM bundle the way `operator-sdk bundle validate` does,
// with operator-framework/api's validators, and checks what those validators do not.
package bundle_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release/image"
)

const root = "../.."

// acceptedWarnings are validator warnings that stay: a part of the warning's text, and why.
var acceptedWarnings = []struct{ text, reason string }{{
	text: "deprecated and removed in v1.25. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-25. Migrate the API(s) for events:",
	// The validator matches RBAC rules by resource name. The rule grants events in group
	// events.k8s.io, whose v1 API the manager uses; only v1beta1 was removed in 1.25, and RBAC
	// rules name no version.
	reason: "false positive: events.k8s.io/v1 is current",
}}

func accepted(warning string) bool {
	for _, a := range acceptedWarnings {
		if strings.Contains(warning, a.text) {
			return true
		}
	}
	return false
}

func load(t *testing.T) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	return b
}

func TestBundlePassesTheValidators(t *testing.T) {
	b := load(t)
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.34"})
	// The defaults of `operator-sdk bundle validate`, its operatorframework suite, and the
	// object validator, which operator-sdk does not offer but which checks the bundle's RBAC.
	validators := interfaces.Validators{
		validation.ClusterServiceVersionValidator,
		validation.CustomResourceDefinitionValidator,
		validation.BundleValidator,
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.GoodPracticesValidator,
		validation.ObjectValidator,
	}
	var results []errors.ManifestResult
	for _, v := range validators {
		results = append(results, v.Validate(objs...)...)
	}
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: %s", r.Name, e.Error())
		}
		for _, w := range r.Warnings {
			if !accepted(w.Error()) {
				t.Errorf("%s: unexpected warning: %s", r.Name, w.Error())
			}
		}
	}
}

func TestDockerfileLabelsMatchAnnotations(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "bundle", "metadata", "annotations.yaml"))
	require.NoError(t, err)
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &meta))

	f, err := os.Open(filepath.Join(root, "bundle.Dockerfile"))
	require.NoError(t, err)
	defer f.Close()
	labels := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if kv, ok := strings.CutPrefix(s.Text(), "LABEL "); ok {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
	}
	require.NoError(t, s.Err())
	require.Equal(t, meta.Annotations, labels)
	for _, key := range []string{"mediatype", "manifests", "metadata", "package", "channels", "channel.default"} {
		require.NotEmpty(t, meta.Annotations["operators.operatorframework.io.bundle."+key+".v1"], key)
	}
}

func TestCSVDeclaresWhatOLMNeeds(t *testing.T) {
	csv := load(t).CSV
	require.Equal(t, []operatorsv1alpha1.InstallMode{
		{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
		{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
		{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: true},
		{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
	}, csv.Spec.InstallModes, "every install mode")

	types := map[operatorsv1alpha1.WebhookAdmissionType]bool{}
	for _, w := range csv.Spec.WebhookDefinitions {
		types[w.Type] = true
	}
	require.Equal(t, map[operatorsv1alpha1.WebhookAdmissionType]bool{
		operatorsv1alpha1.MutatingAdmissionWebhook: true, operatorsv1alpha1.ValidatingAdmissionWebhook: true,
	}, types, "defaulting and validating webhooks; one API version, so no conversion")

	owned, served := map[string]bool{}, map[string]bool{}
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[crd.Version] = true
		require.NotEmpty(t, crd.SpecDescriptors, crd.Version)
		require.NotEmpty(t, crd.StatusDescriptors, crd.Version)
	}
	bundle := load(t)
	require.Len(t, bundle.V1CRDs, 1)
	for _, v := range bundle.V1CRDs[0].Spec.Versions {
		if v.Served {
			served[v.Name] = true
		}
	}
	require.Equal(t, map[string]bool{"v1": true}, served, "v1 is the one version")
	require.Equal(t, served, owned, "every served version is owned, and only those")

	var examples []map[string]any
	require.NoError(t, json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples))
	for _, ex := range examples {
		require.Equal(t, "mycompany.com/v1", ex["apiVersion"], "every example is of a served version")
	}

	image := csv.Annotations["containerImage"]
	require.Contains(t, csv.Spec.RelatedImages, operatorsv1alpha1.RelatedImage{Name: "manager", Image: image})
	require.Equal(t, image, csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image)
	require.NotEmpty(t, csv.Spec.MinKubeVersion)
	for _, key := range []string{"alm-examples", "capabilities", "categories", "containerImage", "createdAt", "repository", "description"} {
		require.NotEmpty(t, csv.Annotations[key], key)
	}
}

// OLM and OperatorHub offer an operator on the platforms its CSV's labels name, and on
// linux/amd64 alone when it names none. The labels name exactly the platforms the images are
// built for, and the manager's node affinity lets it run on each.
func TestCSVNamesThePlatformsTheImagesAreBuiltFor(t *testing.T) {
	csv := load(t).CSV
	want := map[string]string{}
	for _, p := range image.Platforms {
		want["operatorframework.io/os."+p.OS] = "supported"
		want["operatorframework.io/arch."+p.Architecture] = "supported"
	}
	got := map[string]string{}
	for k, v := range csv.Labels {
		if strings.HasPrefix(k, "operatorframework.io/os.") || strings.HasPrefix(k, "operatorframework.io/arch.") {
			got[k] = v
		}
	}
	require.Equal(t, want, got, "the CSV's platform labels (config/manifests/bases) against image.Platforms")

	pod := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
	for _, p := range image.Platforms {
		node := map[string]string{corev1.LabelOSStable: p.OS, corev1.LabelArchStable: p.Architecture}
		require.True(t, schedulable(t, pod.Affinity, node), "the manager may run on a %s/%s node", p.OS, p.Architecture)
	}
	require.False(t, schedulable(t, pod.Affinity, map[string]string{corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64"}),
		"the manager may not run on a windows node")
}

// schedulable reports whether a pod with affinity may run on a node with labels, as the
// scheduler's required node affinity decides.
func schedulable(t *testing.T, affinity *corev1.Affinity, labels map[string]string) bool {
	t.Helper()
	pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: affinity}}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}})
	require.NoError(t, err)
	return ok
}
