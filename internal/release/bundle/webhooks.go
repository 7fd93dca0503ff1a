package bundle

import (
	"fmt"
	"sort"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// webhookDefinitions turns the webhook configurations and the CRDs' conversion webhooks into
// the CSV's webhook definitions, served by the Deployment that the webhook Service selects.
func (b *Bundle) webhookDefinitions(in *inputs, installNamespace string) error {
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
		// setting is used: make it name that Service, in the namespace operators of all
		// namespaces are installed into, rather than a Service that does not exist.
		svc.Name, svc.Namespace = def.DeploymentName+"-service", installNamespace
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
