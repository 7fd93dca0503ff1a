package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
)

// bundle is what the bundle directory holds.
type bundle struct {
	csv       *operatorsv1alpha1.ClusterServiceVersion
	manifests []*unstructured.Unstructured // everything but the CSV, as OLM installs it
	scorecard *unstructured.Unstructured
	// webhookServices only route webhook calls; OLM makes its own Service instead.
	webhookServices map[string]bool
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

func decode(in io.Reader) ([]*unstructured.Unstructured, error) {
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

func build(objs []*unstructured.Unstructured, o options) (*bundle, error) {
	in, err := sortInputs(objs)
	if err != nil {
		return nil, err
	}
	csv := in.csv.DeepCopy()
	csv.Name = o.csvName()
	csv.Spec.Version.Version, _ = parseVersion(o.version)
	csv.Spec.Replaces = o.replaces
	csv.Spec.RelatedImages = []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: o.image}}
	ann := csv.Annotations
	ann["createdAt"] = o.createdAt
	ann["containerImage"] = o.image
	ann["operators.operatorframework.io/builder"] = "app-operator-bundle"
	ann["operators.operatorframework.io/project_layout"] = "go.kubebuilder.io/v4"
	if o.skipRange != "" {
		ann["olm.skipRange"] = o.skipRange
	}
	if ann["alm-examples"], err = examples(in.samples); err != nil {
		return nil, err
	}

	b := &bundle{csv: csv, scorecard: in.scorecard, webhookServices: map[string]bool{}}
	if b.scorecard != nil {
		b.scorecard.SetName("config")
		setScorecardImage(b.scorecard, o.scorecardImage)
	}
	if err := b.install(in, o); err != nil {
		return nil, err
	}
	if err := b.webhookDefinitions(in); err != nil {
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

// install fills the CSV's deployment install strategy: the Deployments with the release's
// image, and as permissions the rules of every role bound to their ServiceAccount. Roles bound
// to no one stay manifests of their own.
func (b *bundle) install(in *inputs, o options) error {
	accounts := map[string]bool{}
	strategy := operatorsv1alpha1.StrategyDetailsDeployment{}
	for _, d := range in.deployments {
		spec := d.Spec.DeepCopy()
		for i := range spec.Template.Spec.Containers {
			if spec.Template.Spec.Containers[i].Name == "manager" {
				spec.Template.Spec.Containers[i].Image = o.image
			}
		}
		strategy.DeploymentSpecs = append(strategy.DeploymentSpecs,
			operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Spec: *spec, Label: d.Labels})
		accounts[spec.Template.Spec.ServiceAccountName] = true
	}

	bound := map[string]bool{}
	for _, rb := range in.bindings {
		binding, err := typed[rbacv1.ClusterRoleBinding](rb) // RoleBinding has the same shape
		if err != nil {
			return err
		}
		for _, s := range binding.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || !accounts[s.Name] {
				continue
			}
			role := in.roles[binding.RoleRef.Kind+"/"+binding.RoleRef.Name]
			if role == nil {
				return fmt.Errorf("%s %s binds %s %s, which is not among the manifests", rb.GetKind(), rb.GetName(), binding.RoleRef.Kind, binding.RoleRef.Name)
			}
			rules, err := typed[rbacv1.ClusterRole](role)
			if err != nil {
				return err
			}
			if rb.GetKind() == "RoleBinding" {
				strategy.Permissions = grant(strategy.Permissions, s.Name, rules.Rules)
			} else {
				strategy.ClusterPermissions = grant(strategy.ClusterPermissions, s.Name, rules.Rules)
			}
			bound[binding.RoleRef.Kind+"/"+binding.RoleRef.Name] = true
		}
	}
	names := make([]string, 0, len(in.roles))
	for name := range in.roles {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !bound[name] {
			b.manifests = append(b.manifests, in.roles[name])
		}
	}
	for _, rb := range in.bindings {
		if !bindsAccount(rb, accounts) {
			b.manifests = append(b.manifests, rb)
		}
	}
	b.csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy,
	}
	return nil
}

// grant adds rules to a ServiceAccount's permissions, one entry per ServiceAccount.
func grant(perms []operatorsv1alpha1.StrategyDeploymentPermissions, account string, rules []rbacv1.PolicyRule) []operatorsv1alpha1.StrategyDeploymentPermissions {
	for i := range perms {
		if perms[i].ServiceAccountName == account {
			perms[i].Rules = append(perms[i].Rules, rules...)
			return perms
		}
	}
	return append(perms, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: account, Rules: rules})
}

func bindsAccount(rb *unstructured.Unstructured, accounts map[string]bool) bool {
	subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		if m["kind"] == rbacv1.ServiceAccountKind && accounts[fmt.Sprint(m["name"])] {
			return true
		}
	}
	return false
}

// webhookDefinitions turns the webhook configurations and the CRDs' conversion webhooks into
// the CSV's webhook definitions, served by the Deployment that the webhook Service selects.
func (b *bundle) webhookDefinitions(in *inputs) error {
	var defs []operatorsv1alpha1.WebhookDescription
	for _, u := range in.webhooks {
		var hooks []admissionregistrationv1.ValidatingWebhook
		typ := operatorsv1alpha1.ValidatingAdmissionWebhook
		if u.GetKind() == "MutatingWebhookConfiguration" {
			typ = operatorsv1alpha1.MutatingAdmissionWebhook
			cfg, err := typed[admissionregistrationv1.MutatingWebhookConfiguration](u)
			if err != nil {
				return err
			}
			for _, h := range cfg.Webhooks {
				hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{Name: h.Name, ClientConfig: h.ClientConfig,
					Rules: h.Rules, FailurePolicy: h.FailurePolicy, MatchPolicy: h.MatchPolicy, ObjectSelector: h.ObjectSelector,
					SideEffects: h.SideEffects, TimeoutSeconds: h.TimeoutSeconds, AdmissionReviewVersions: h.AdmissionReviewVersions})
			}
		} else {
			cfg, err := typed[admissionregistrationv1.ValidatingWebhookConfiguration](u)
			if err != nil {
				return err
			}
			hooks = cfg.Webhooks
		}
		for _, h := range hooks {
			def, err := in.served(h.ClientConfig.Service)
			if err != nil {
				return fmt.Errorf("webhook %s: %w", h.Name, err)
			}
			def.GenerateName, def.Type, def.Rules = h.Name, typ, h.Rules
			def.FailurePolicy, def.MatchPolicy, def.ObjectSelector = h.FailurePolicy, h.MatchPolicy, h.ObjectSelector
			def.SideEffects, def.TimeoutSeconds, def.AdmissionReviewVersions = h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions
			defs = append(defs, def)
			b.webhookServices[h.ClientConfig.Service.Name] = true
		}
	}
	for _, crd := range in.crds {
		c := crd.Spec.Conversion
		if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
			continue
		}
		svc := c.Webhook.ClientConfig.Service
		if svc == nil {
			return fmt.Errorf("CRD %s: the conversion webhook must name a Service", crd.Name)
		}
		ref := &admissionregistrationv1.ServiceReference{Name: svc.Name, Namespace: svc.Namespace, Path: svc.Path, Port: svc.Port}
		def, err := in.served(ref)
		if err != nil {
			return fmt.Errorf("CRD %s conversion: %w", crd.Name, err)
		}
		// OLM points the conversion webhook at the Service it makes, in the namespace it installs
		// into. Until it does, right after it applies this CRD during an upgrade, the CRD's own
		// setting is used: make it name that Service, in OLM's usual namespace for operators
		// of all namespaces, rather than a Service that does not exist.
		svc.Name, svc.Namespace = def.DeploymentName+"-service", "operators"
		def.GenerateName = "c" + crd.Name
		def.Type = operatorsv1alpha1.ConversionWebhook
		def.ConversionCRDs = []string{crd.Name}
		def.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNone)
		def.AdmissionReviewVersions = c.Webhook.ConversionReviewVersions
		defs = append(defs, def)
		b.webhookServices[ref.Name] = true
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].GenerateName < defs[j].GenerateName })
	b.csv.Spec.WebhookDefinitions = defs
	return nil
}

// served finds the Deployment behind a webhook Service and the ports OLM must wire up.
func (in *inputs) served(ref *admissionregistrationv1.ServiceReference) (operatorsv1alpha1.WebhookDescription, error) {
	var def operatorsv1alpha1.WebhookDescription
	if ref == nil {
		return def, fmt.Errorf("the webhook must name a Service")
	}
	port := ptr.Deref(ref.Port, 443)
	for _, s := range in.services {
		if s.Name != ref.Name {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.Port != port {
				continue
			}
			for _, d := range in.deployments {
				if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
					target := p.TargetPort
					if target == (intstr.IntOrString{}) {
						target = intstr.FromInt32(p.Port)
					}
					def.DeploymentName, def.ContainerPort, def.TargetPort, def.WebhookPath = d.Name, port, &target, ref.Path
					return def, nil
				}
			}
			return def, fmt.Errorf("Service %s selects no Deployment", s.Name)
		}
		return def, fmt.Errorf("Service %s has no port %d", s.Name, port)
	}
	return def, fmt.Errorf("no Service %s among the manifests", ref.Name)
}

// examples renders the samples as the alm-examples annotation: the v1 examples first.
func examples(samples []*unstructured.Unstructured) (string, error) {
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
