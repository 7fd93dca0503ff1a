package chart_test

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/bundle"
	"github.com/mycompany/app-operator/test/chart"
	"github.com/mycompany/app-operator/test/localcluster"
)

const namespace = "ops"

var root = localcluster.RepoRoot()

func render(t *testing.T, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, _, err := chart.Render(vals, namespace)
	require.NoError(t, err)
	return objs
}

// find returns the one object of kind (and of name, when given) as T.
func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind string, name ...string) *T {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && (len(name) == 0 || o.GetName() == name[0]) {
			found = append(found, o)
		}
	}
	require.Len(t, found, 1, "one %s %v", kind, name)
	return convert[T](t, found[0])
}

// convert converts an object as rendered to T.
func convert[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out))
	return out
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, out))
}

func TestTheChartLintsClean(t *testing.T) {
	for _, vals := range []map[string]any{
		nil,
		{"certificates": map[string]any{"source": "cert-manager"}},
		{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}}},
		{"watchNamespaces": []any{"team-a", "team-b"}},
	} {
		assert.Empty(t, chart.Lint(vals), "helm lint --strict with %v", vals)
	}
}

func TestTheChartIsVersionedAsTheReleaseBeingPrepared(t *testing.T) {
	releases, err := release.Load(filepath.Join(root, "catalog"))
	require.NoError(t, err)
	ch, err := chart.Load()
	require.NoError(t, err)
	version := releases.Latest().Version
	assert.Equal(t, version, ch.Metadata.Version)
	assert.Equal(t, version, ch.Metadata.AppVersion)
	d := find[appsv1.Deployment](t, render(t, nil), "Deployment")
	for _, c := range d.Spec.Template.Spec.Containers {
		assert.Equal(t, localcluster.TagBase+":v"+version, c.Image)
	}
	d = find[appsv1.Deployment](t, render(t, map[string]any{"image": map[string]any{"digest": "sha256:" + strings.Repeat("ab", 32)}}), "Deployment")
	assert.Equal(t, localcluster.TagBase+"@sha256:"+strings.Repeat("ab", 32), d.Spec.Template.Spec.Containers[0].Image, "a digest wins over the tag")
}

// TestTheChartShowsTheBundlesIcon: the chart's icon is the file the ClusterServiceVersion's
// icon was taken from, on the default branch, so that Helm's listings show OperatorHub's.
func TestTheChartShowsTheBundlesIcon(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	require.Len(t, b.CSV.Spec.Icon, 1)
	icon := b.CSV.Spec.Icon[0]
	require.Equal(t, "image/svg+xml", icon.MediaType)
	want, err := base64.StdEncoding.DecodeString(icon.Data)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "docs", "icon.svg"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "docs/icon.svg is the bundle's icon")

	ch, err := chart.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://raw.githubusercontent.com/mycompany/app-operator/main/docs/icon.svg", ch.Metadata.Icon)
	assert.Equal(t, "https://github.com/mycompany/app-operator", ch.Metadata.Home, "the icon's repository is the chart's home")
}

// TestTheChartRunsTheManagerAsTheBundleDoes compares the chart's Deployment with the one the
// bundle's CSV gives OLM: a default that changes in one and not in the other fails here.
func TestTheChartRunsTheManagerAsTheBundleDoes(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	want := b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec
	got := find[appsv1.Deployment](t, render(t, nil), "Deployment").Spec

	assert.Equal(t, want.Replicas, got.Replicas)
	assert.Equal(t, want.Strategy, got.Strategy)
	wantPod, gotPod := want.Template.Spec, got.Template.Spec
	assert.Equal(t, wantPod.SecurityContext, gotPod.SecurityContext)
	assert.Equal(t, wantPod.Affinity, gotPod.Affinity)
	assert.Equal(t, wantPod.TerminationGracePeriodSeconds, gotPod.TerminationGracePeriodSeconds)
	require.Len(t, gotPod.TopologySpreadConstraints, len(wantPod.TopologySpreadConstraints))
	for i, w := range wantPod.TopologySpreadConstraints {
		g := gotPod.TopologySpreadConstraints[i]
		assert.Equal(t, []any{w.MaxSkew, w.TopologyKey, w.WhenUnsatisfiable}, []any{g.MaxSkew, g.TopologyKey, g.WhenUnsatisfiable})
		assert.Equal(t, got.Selector.MatchLabels, g.LabelSelector.MatchLabels, "spread among the manager's own pods")
	}
	for k, v := range want.Selector.MatchLabels {
		assert.Equal(t, v, got.Selector.MatchLabels[k], "the bundle's selector label %s", k)
	}

	// Each container as the bundle's, but for what the chart does itself: serve with its
	// certificate, and apply the monitoring objects rather than have the manager do it.
	chartOnly := []string{"--webhook-cert-path=", "--metrics-cert-path=", "--install-monitoring=false"}
	require.Len(t, gotPod.Containers, len(wantPod.Containers))
	for i, w := range wantPod.Containers {
		g := gotPod.Containers[i]
		assert.Equal(t, w.Name, g.Name)
		assert.Equal(t, w.Image, g.Image, "container %s", w.Name)
		assert.Equal(t, w.Command, g.Command, "container %s", w.Name)
		var args []string
		for _, a := range g.Args {
			if !hasAnyPrefix(a, chartOnly) {
				args = append(args, a)
			}
		}
		assert.ElementsMatch(t, w.Args, args, "container %s", w.Name)
		// The bundle's controllers watch what OLM's OperatorGroup targets; the chart's, every
		// namespace.
		env := slices.DeleteFunc(slices.Clone(w.Env), func(e corev1.EnvVar) bool { return e.Name == "APP_OPERATOR_WATCH_NAMESPACES" })
		assert.True(t, equality.Semantic.DeepEqual(env, g.Env), "container %s: env %v, not the bundle's %v", w.Name, g.Env, env)
		assert.Equal(t, w.Ports, g.Ports, "container %s", w.Name)
		assert.Equal(t, w.Resources, g.Resources, "container %s", w.Name)
		assert.Equal(t, w.LivenessProbe, g.LivenessProbe, "container %s", w.Name)
		assert.Equal(t, w.ReadinessProbe, g.ReadinessProbe, "container %s", w.Name)
		assert.Equal(t, w.SecurityContext, g.SecurityContext, "container %s", w.Name)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestTheChartServesWhatMakeManifestsGenerates checks the CRD, the webhooks and the manager's
// rules against config/, which the code's markers generate.
func TestTheChartServesWhatMakeManifestsGenerates(t *testing.T) {
	objs := render(t, nil)

	var wantCRD apiextensionsv1.CustomResourceDefinition
	readYAML(t, "config/crd/bases/mycompany.com_apps.yaml", &wantCRD)
	crd := find[apiextensionsv1.CustomResourceDefinition](t, objs, "CustomResourceDefinition")
	assert.Equal(t, wantCRD.Spec.Versions, crd.Spec.Versions)
	assert.Equal(t, wantCRD.Spec.Names, crd.Spec.Names)
	assert.Equal(t, "keep", crd.Annotations["helm.sh/resource-policy"], "an uninstall keeps the CRD, and every App")
	assert.Nil(t, crd.Spec.Conversion, "one version: nothing to convert")

	service := find[corev1.Service](t, objs, "Service", "app-operator-webhook-service")
	deployment := find[appsv1.Deployment](t, objs, "Deployment")
	assert.Equal(t, deployment.Spec.Selector.MatchLabels, service.Spec.Selector, "the webhook Service sends calls to the manager")

	var want []admissionregistrationv1.MutatingWebhook
	raw, err := os.ReadFile(filepath.Join(root, "config/webhook/manifests.yaml"))
	require.NoError(t, err)
	docs, err := bundle.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	for _, doc := range docs {
		if doc.GetKind() == "MutatingWebhookConfiguration" {
			want = convert[admissionregistrationv1.MutatingWebhookConfiguration](t, doc).Webhooks
		}
	}
	mutating := find[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration")
	validating := find[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration")
	require.Len(t, mutating.Webhooks, len(want))
	var configs []admissionregistrationv1.WebhookClientConfig
	for i, w := range want {
		g := mutating.Webhooks[i]
		assert.Equal(t, []any{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy}, []any{g.Name, g.Rules, g.FailurePolicy, g.MatchPolicy})
		assert.Equal(t, w.ClientConfig.Service.Path, g.ClientConfig.Service.Path)
		configs = append(configs, g.ClientConfig)
	}
	require.Len(t, validating.Webhooks, 2)
	for _, v := range validating.Webhooks {
		configs = append(configs, v.ClientConfig)
	}

	// Every webhook calls the chart's Service, and trusts the CA of the certificate it serves.
	secret := find[corev1.Secret](t, objs, "Secret")
	assert.Equal(t, secret.Name, deployment.Spec.Template.Spec.Volumes[0].Secret.SecretName)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(secret.Data["ca.crt"]))
	block, _ := pem.Decode(secret.Data["tls.crt"])
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	for _, host := range []string{service.Name + "." + namespace + ".svc", "app-operator-controller-manager-metrics-service." + namespace + ".svc"} {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
		assert.NoError(t, err, "the certificate serves %s", host)
	}
	for _, c := range configs {
		require.NotNil(t, c.Service)
		assert.Equal(t, []string{service.Name, namespace}, []string{c.Service.Name, c.Service.Namespace})
		assert.Equal(t, secret.Data["ca.crt"], c.CABundle)
	}

	var wantRole rbacv1.ClusterRole
	raw, err = os.ReadFile(filepath.Join(root, "config/rbac/role.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal([]byte(strings.Split(string(raw), "\n---\n")[0]), &wantRole))
	require.NotEmpty(t, wantRole.Rules)
	assert.Equal(t, wantRole.Rules, find[rbacv1.ClusterRole](t, objs, "ClusterRole", "app-operator-manager-role").Rules)
	binding := find[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "app-operator-manager-rolebinding")
	assert.Equal(t, deployment.Spec.Template.Spec.ServiceAccountName, binding.Subjects[0].Name)
}

func TestCertManagerIssuesTheCertificateWhenAsked(t *testing.T) {
	for name, tc := range map[string]struct {
		issuerRef  map[string]any
		wantIssuer string
		issuers    int
	}{
		"a self-signed Issuer of the chart's": {issuerRef: map[string]any{}, wantIssuer: "app-operator-selfsigned-issuer", issuers: 1},
		"the user's ClusterIssuer":            {issuerRef: map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"}, wantIssuer: "corp-ca"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, map[string]any{"certificates": map[string]any{"source": "cert-manager", "certManager": map[string]any{"issuerRef": tc.issuerRef}}})
			assert.Zero(t, kinds(objs)["Secret"], "cert-manager makes the Secret")
			assert.Equal(t, tc.issuers, kinds(objs)["Issuer"])
			var cert struct {
				Spec struct {
					SecretName string            `json:"secretName"`
					DNSNames   []string          `json:"dnsNames"`
					IssuerRef  map[string]string `json:"issuerRef"`
				} `json:"spec"`
			}
			u := find[unstructured.Unstructured](t, objs, "Certificate")
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cert))
			assert.Equal(t, tc.wantIssuer, cert.Spec.IssuerRef["name"])
			deployment := find[appsv1.Deployment](t, objs, "Deployment")
			assert.Equal(t, cert.Spec.SecretName, deployment.Spec.Template.Spec.Volumes[0].Secret.SecretName)
			assert.Contains(t, cert.Spec.DNSNames, "app-operator-webhook-service."+namespace+".svc")
			assert.Contains(t, cert.Spec.DNSNames, "app-operator-controller-manager-metrics-service."+namespace+".svc")

			inject := namespace + "/" + u.GetName()
			for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
				o := find[unstructured.Unstructured](t, objs, kind)
				assert.Equal(t, inject, o.GetAnnotations()["cert-manager.io/inject-ca-from"], kind)
			}
		})
	}
}

func TestMonitoringIsTheReleasesWhenAsked(t *testing.T) {
	byKind := kinds(render(t, nil))
	assert.Zero(t, byKind["ServiceMonitor"]+byKind["PrometheusRule"], "off by default")

	objs := render(t, map[string]any{"monitoring": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}},
		"prometheusRule": map[string]any{"enabled": true},
	}})
	monitor := find[unstructured.Unstructured](t, objs, "ServiceMonitor")
	assert.Equal(t, "prometheus", monitor.GetLabels()["release"], "the label a Prometheus selects monitors by")
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	metrics := find[corev1.Service](t, objs, "Service", "app-operator-controller-manager-metrics-service")
	webhook := find[corev1.Service](t, objs, "Service", "app-operator-webhook-service")
	assert.True(t, selects(selector, metrics.Labels), "it scrapes the metrics Service")
	assert.False(t, selects(selector, webhook.Labels), "and not the webhook Service")
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	var ports []string
	for _, p := range metrics.Spec.Ports {
		ports = append(ports, p.Name)
	}
	for _, e := range endpoints {
		assert.Contains(t, ports, e.(map[string]any)["port"])
	}

	// The alerts are the ones the manager applies under OLM (internal/monitoring).
	var want map[string]any
	readYAML(t, "internal/monitoring/prometheusrule.yaml", &want)
	rule := find[unstructured.Unstructured](t, objs, "PrometheusRule")
	assert.Equal(t, want["spec"], rule.Object["spec"])

	args := find[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
	assert.Contains(t, args, "--install-monitoring=false", "the release owns them, so that an uninstall removes them")
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestBadValuesAreRefusedByName renders the chart with values its schema refuses: each error
// names the field, and nothing is rendered.
func TestBadValuesAreRefusedByName(t *testing.T) {
	for _, tc := range []struct {
		vals  string
		field string
	}{
		{`replicaCount: 0`, "/replicaCount"},
		{`replicas: 2`, "replicas"},
		{`certificates: {source: vault}`, "/certificates/source"},
		{`certificates: {validityDays: 7}`, "/certificates/validityDays"},
		{`image: {digest: latest}`, "/image/digest"},
		{`image: {pullPolicy: Sometimes}`, "/image/pullPolicy"},
		{`manager: {extraArgs: [sync-period=1h]}`, "/manager/extraArgs/0"},
		{`manager: {resources: {limits: {memory: 256}}}`, "/manager/resources/limits/memory"},
		{`crds: {keep: "yes"}`, "/crds/keep"},
		{`certificates: {certManager: {issuerRef: {kind: Secret}}}`, "/certificates/certManager/issuerRef/kind"},
		{`watchNamespaces: team-a`, "/watchNamespaces"},
		{`watchNamespaces: [team-a, Team_B]`, "/watchNamespaces/1"},
		{`watchNamespaces: [team-a, team-a]`, "/watchNamespaces"},
	} {
		var vals map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(tc.vals), &vals))
		objs, _, err := chart.Render(vals, namespace)
		if assert.Error(t, err, tc.vals) {
			assert.Contains(t, err.Error(), tc.field, tc.vals)
		}
		assert.Empty(t, objs)
	}
}

func TestTheNotesSayHowToStartAndWhatUninstallKeeps(t *testing.T) {
	_, notes, err := chart.Render(nil, namespace)
	require.NoError(t, err)
	assert.Contains(t, notes, "kubectl -n ops rollout status deployment/app-operator-controller-manager")
	assert.Contains(t, notes, "kubectl delete crd apps.mycompany.com")
	_, notes, err = chart.Render(map[string]any{"crds": map[string]any{"keep": false}}, namespace)
	require.NoError(t, err)
	assert.NotContains(t, notes, "keeps the App CRD")
}

// TestTheChartCarriesTheBundlesNetworkPolicies checks that the chart admits what the bundle's
// NetworkPolicies admit, for its own pods, and nothing when they are turned off.
func TestTheChartCarriesTheBundlesNetworkPolicies(t *testing.T) {
	objs := render(t, nil)
	pods := find[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Labels
	for _, name := range []string{"allow-webhook-traffic", "allow-metrics-traffic"} {
		var want networkingv1.NetworkPolicy
		readYAML(t, "config/network-policy/"+name+".yaml", &want)
		got := find[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy", "app-operator-"+name)
		assert.Equal(t, namespace, got.Namespace)
		assert.Equal(t, want.Spec.Ingress, got.Spec.Ingress, name)
		assert.Equal(t, want.Spec.PolicyTypes, got.Spec.PolicyTypes, name)
		assert.True(t, selects(got.Spec.PodSelector.MatchLabels, pods), "%s applies to the manager's pods", name)
	}
	assert.Zero(t, kinds(render(t, map[string]any{"networkPolicy": map[string]any{"enabled": false}}))["NetworkPolicy"])
}
