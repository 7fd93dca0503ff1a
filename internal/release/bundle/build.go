package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Bundle is what the bundle directory holds.
type Bundle struct {
	csv       *operatorsv1alpha1.ClusterServiceVersion
	manifests []*unstructured.Unstructured // everything but the CSV, as OLM installs it
	scorecard *unstructured.Unstructured
	// webhookServices only route webhook calls; OLM makes its own Service instead.
	webhookServices map[string]bool
	// channels and defaultChannel are the release's channels, for its annotations.
	channels       []string
	defaultChannel string
}

// inputs sorts the kustomize output by what the bundle makes of it.
type inputs struct {
	csv            *operatorsv1alpha1.ClusterServiceVersion
	crds           []*apiextensionsv1.CustomResourceDefinition
	deployments    []*appsv1.Deployment
	services       []*corev1.Service
	roles          map[string]*unstructured.Unstructured // by kind/name
	bindings       []*unstructured.Unstructured
	webhooks       []*unstructured.Unstructured
	samples        []*unstructured.Unstructured
	scorecard      *unstructured.Unstructured
	others         []*unstructured.Unstructured
	serviceAccount map[string]bool
}

// Decode reads a stream of YAML or JSON documents (kustomize's output, a release manifest)
// into objects, skipping empty documents.
func Decode(in io.Reader) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("reading manifests: %w", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

func typed[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out, nil
}

func sortInputs(objs []*unstructured.Unstructured) (*inputs, error) {
	in := &inputs{roles: map[string]*unstructured.Unstructured{}, serviceAccount: map[string]bool{}}
	var err error
	for _, u := range objs {
		switch gk := u.GroupVersionKind().GroupKind(); gk.Kind {
		case "ClusterServiceVersion":
			in.csv, err = typed[operatorsv1alpha1.ClusterServiceVersion](u)
		case "CustomResourceDefinition":
			var crd *apiextensionsv1.CustomResourceDefinition
			crd, err = typed[apiextensionsv1.CustomResourceDefinition](u)
			in.crds = append(in.crds, crd)
		case "Deployment":
			var d *appsv1.Deployment
			d, err = typed[appsv1.Deployment](u)
			in.deployments = append(in.deployments, d)
		case "Service":
			var s *corev1.Service
			s, err = typed[corev1.Service](u)
			in.services = append(in.services, s)
		case "Role", "ClusterRole":
			in.roles[gk.Kind+"/"+u.GetName()] = u
		case "RoleBinding", "ClusterRoleBinding":
			in.bindings = append(in.bindings, u)
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			in.webhooks = append(in.webhooks, u)
		case "ServiceAccount":
			in.serviceAccount[u.GetName()] = true
		case "Namespace":
			// OLM installs into the namespace of the OperatorGroup.
		case "Configuration":
			in.scorecard = u
		case "App":
			in.samples = append(in.samples, u)
		default:
			in.others = append(in.others, u)
		}
		if err != nil {
			return nil, err
		}
	}
	if in.csv == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion base among the manifests")
	}
	if len(in.deployments) == 0 {
		return nil, fmt.Errorf("no Deployment among the manifests")
	}
	return in, nil
}

// Generate makes the bundle of a release from the manifests of config/manifests.
func Generate(manifests io.Reader, o Options) (*Bundle, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	objs, err := Decode(manifests)
	if err != nil {
		return nil, err
	}
	in, err := sortInputs(objs)
	if err != nil {
		return nil, err
	}
	csv := in.csv.DeepCopy()
	csv.Name = o.csvName()
	csv.Spec.Version.Version = semver.MustParse(o.Version)
	csv.Spec.Replaces = o.Replaces
	csv.Spec.RelatedImages = []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: o.Image}}
	ann := csv.Annotations
	ann["createdAt"] = o.CreatedAt
	ann["containerImage"] = o.Image
	ann["operators.operatorframework.io/builder"] = "app-operator-bundle"
	ann["operators.operatorframework.io/project_layout"] = "go.kubebuilder.io/v4"
	if o.SkipRange != "" {
		ann["olm.skipRange"] = o.SkipRange
	}
	if ann["alm-examples"], err = examples(in.samples, in.crds); err != nil {
		return nil, err
	}

	b := &Bundle{csv: csv, channels: o.Channels, defaultChannel: o.DefaultChannel, scorecard: in.scorecard, webhookServices: map[string]bool{}}
	if b.scorecard != nil {
		b.scorecard.SetName("config")
		setScorecardImage(b.scorecard, o.ScorecardImage)
	}
	if err := b.install(in, o); err != nil {
		return nil, err
	}
	if err := b.webhookDefinitions(in, o.InstallNamespace); err != nil {
		return nil, err
	}
	for _, crd := range in.crds {
		u, err := toUnstructured(crd)
		if err != nil {
			return nil, err
		}
		b.manifests = append(b.manifests, u)
	}
	for _, s := range in.services {
		if b.webhookServices[s.Name] {
			continue
		}
		u, err := toUnstructured(s)
		if err != nil {
			return nil, err
		}
		b.manifests = append(b.manifests, u)
	}
	b.manifests = append(b.manifests, in.others...)
	for _, m := range b.manifests {
		m.SetNamespace("")
	}
	return b, nil
}

// examples renders the samples as the alm-examples annotation: the v1 examples first. A sample
// of a version its CRD does not serve is refused: OLM's users would be offered an example the
// API server cannot take.
func examples(samples []*unstructured.Unstructured, crds []*apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, s := range samples {
		if gvk := s.GroupVersionKind(); !served(crds, gvk.Group, gvk.Kind, gvk.Version) {
			return "", fmt.Errorf("sample %s %s: no CRD serves %s %s; write it in a served version", gvk.Kind, s.GetName(), gvk.Kind, s.GetAPIVersion())
		}
	}
	sort.SliceStable(samples, func(i, j int) bool {
		vi, vj := samples[i].GroupVersionKind().Version, samples[j].GroupVersionKind().Version
		return vi == "v1" && vj != "v1"
	})
	var list []map[string]any
	for _, s := range samples {
		c := s.DeepCopy()
		c.SetNamespace("")
		list = append(list, c.Object)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(list); err != nil {
		return "", err
	}
	return strings.TrimSpace(buf.String()), nil
}

// served reports whether a CRD among crds serves a kind of a group in version.
func served(crds []*apiextensionsv1.CustomResourceDefinition, group, kind, version string) bool {
	for _, crd := range crds {
		if crd.Spec.Group != group || crd.Spec.Names.Kind != kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == version && v.Served {
				return true
			}
		}
	}
	return false
}

// setScorecardImage points the App Operator tests of the scorecard configuration at the
// release's scorecard image.
func setScorecardImage(cfg *unstructured.Unstructured, image string) {
	stages, _, _ := unstructured.NestedSlice(cfg.Object, "stages")
	for _, st := range stages {
		tests, _ := st.(map[string]any)["tests"].([]any)
		for _, t := range tests {
			test := t.(map[string]any)
			if l, _ := test["labels"].(map[string]any); l["suite"] == "app" {
				test["image"] = image
			}
		}
	}
	_ = unstructured.SetNestedSlice(cfg.Object, stages, "stages")
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
