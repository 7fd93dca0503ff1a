package bundle

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release"
)

func options() Options {
	return Options{Version: "0.5.0", Image: "quay.io/mycompany/app-operator:v0.5.0",
		ScorecardImage: "quay.io/mycompany/app-operator-scorecard:v0.5.0", CreatedAt: "2026-12-05T00:00:00Z",
		Replaces: "app-operator.v0.4.0", SkipRange: ">=0.1.0 <0.5.0", Channels: []string{"stable"}, DefaultChannel: "stable",
		InstallNamespace: DefaultInstallNamespace}
}

func generate(t *testing.T, o Options) *Bundle {
	t.Helper()
	f, err := os.Open("testdata/manifests.yaml")
	require.NoError(t, err)
	defer f.Close()
	b, err := Generate(f, o)
	require.NoError(t, err)
	return b
}

func TestForReleaseDerivesTheGraphAndDateFromTheRecord(t *testing.T) {
	rs := release.Releases{
		{Version: "0.4.0", Date: "2026-12-03", Commit: "f2933d8db2a97b191063f3bc59ed5cfcdc69c0ac"},
		{Version: "0.5.0", Date: "2026-12-05"},
	}
	o, err := ForRelease(rs, "0.5.0")
	require.NoError(t, err)
	require.Equal(t, "app-operator.v0.4.0", o.Replaces)
	require.Equal(t, ">=0.4.0 <0.5.0", o.SkipRange)
	require.Equal(t, "2026-12-05T00:00:00Z", o.CreatedAt)
	require.Equal(t, []string{"stable"}, o.Channels)

	_, err = ForRelease(rs, "0.6.0")
	require.EqualError(t, err, "version 0.6.0 is not in releases.yaml: add it as the release being prepared")
}

func TestTheClusterServiceVersionCarriesTheRelease(t *testing.T) {
	csv := generate(t, options()).csv
	require.Equal(t, "app-operator.v0.5.0", csv.Name)
	require.Equal(t, "0.5.0", csv.Spec.Version.String())
	require.Equal(t, "app-operator.v0.4.0", csv.Spec.Replaces)
	require.Equal(t, ">=0.1.0 <0.5.0", csv.Annotations["olm.skipRange"])
	require.Equal(t, "2026-12-05T00:00:00Z", csv.Annotations["createdAt"])
	require.Equal(t, "quay.io/mycompany/app-operator:v0.5.0", csv.Annotations["containerImage"])
	require.Equal(t, "Full Lifecycle", csv.Annotations["capabilities"], "the base's annotations stay")
	require.Equal(t, []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: "quay.io/mycompany/app-operator:v0.5.0"}}, csv.Spec.RelatedImages)

	o := options()
	o.Replaces, o.SkipRange = "", ""
	csv = generate(t, o).csv
	require.Empty(t, csv.Spec.Replaces)
	require.NotContains(t, csv.Annotations, "olm.skipRange", "the first release skips nothing")
}

func TestTheExamplesPutV1First(t *testing.T) {
	var examples []map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(generate(t, options()).csv.Annotations["alm-examples"]), &examples))
	require.Len(t, examples, 2)
	require.Equal(t, "mycompany.com/v1", examples[0]["apiVersion"])
	require.Equal(t, "mycompany.com/v1alpha1", examples[1]["apiVersion"])
	require.NotContains(t, examples[0]["metadata"], "namespace", "examples are created where the user chooses")
}

func TestTheInstallStrategyRunsTheReleaseImageWithTheRulesBoundToItsServiceAccount(t *testing.T) {
	strategy := generate(t, options()).csv.Spec.InstallStrategy.StrategySpec
	require.Len(t, strategy.DeploymentSpecs, 1)
	containers := strategy.DeploymentSpecs[0].Spec.Template.Spec.Containers
	require.Equal(t, "quay.io/mycompany/app-operator:v0.5.0", containers[0].Image, "the manager runs the release's image")
	require.Equal(t, "quay.io/mycompany/app-operator:v0.5.0", containers[1].Image, "so do its webhooks, from the same image")
	require.Equal(t, "sidecar:1.0", containers[2].Image, "other containers keep theirs")

	// A RoleBinding grants namespaced permissions; a ClusterRoleBinding cluster permissions.
	require.Len(t, strategy.Permissions, 1)
	require.Equal(t, "controller-manager", strategy.Permissions[0].ServiceAccountName)
	require.Equal(t, []string{"leases"}, strategy.Permissions[0].Rules[0].Resources)
	require.Len(t, strategy.ClusterPermissions, 1)
	require.Equal(t, []string{"apps"}, strategy.ClusterPermissions[0].Rules[0].Resources)
}

func TestRolesBoundToOthersStayManifestsAndTheirBindingsToo(t *testing.T) {
	b := generate(t, options())
	names := manifestNames(b)
	require.Contains(t, names, "ClusterRole/app-viewer-role")
	require.Contains(t, names, "ClusterRoleBinding/someone-views-apps")
	for _, granted := range []string{"ClusterRole/manager-role", "ClusterRoleBinding/manager-rolebinding",
		"Role/leader-election-role", "RoleBinding/leader-election-rolebinding"} {
		require.NotContains(t, names, granted, "OLM makes the roles of the install strategy itself")
	}
}

func TestTheBundleKeepsWhatOLMInstallsAndDropsWhatItMakes(t *testing.T) {
	b := generate(t, options())
	names := manifestNames(b)
	require.Contains(t, names, "CustomResourceDefinition/apps.mycompany.com")
	require.Contains(t, names, "Service/metrics-service")
	require.Contains(t, names, "PrometheusRule/rules")
	require.NotContains(t, names, "Service/webhook-service", "OLM makes the webhook Service")
	require.NotContains(t, names, "Namespace/system", "OLM installs into the OperatorGroup's namespace")
	require.NotContains(t, names, "Deployment/controller-manager", "the Deployment is in the install strategy")
	for _, m := range b.manifests {
		require.Empty(t, m.GetNamespace(), "%s %s: OLM chooses the namespace", m.GetKind(), m.GetName())
	}
}

func TestWebhookDefinitionsPointAtTheDeploymentBehindTheService(t *testing.T) {
	defs := generate(t, options()).csv.Spec.WebhookDefinitions
	require.Len(t, defs, 3)
	byName := map[string]operatorsv1alpha1.WebhookDescription{}
	for _, d := range defs {
		byName[d.GenerateName] = d
		require.Equal(t, "controller-manager", d.DeploymentName)
		require.Equal(t, int32(443), d.ContainerPort)
		require.Equal(t, intstr.FromInt32(9443), *d.TargetPort, "the Service's target port")
	}
	m := byName["mapp.mycompany.com"]
	require.Equal(t, operatorsv1alpha1.MutatingAdmissionWebhook, m.Type)
	require.Equal(t, "/mutate-mycompany-com-v1-app", *m.WebhookPath)
	require.Equal(t, admissionregistrationv1.Fail, *m.FailurePolicy)
	require.Equal(t, admissionregistrationv1.Equivalent, *m.MatchPolicy)
	v := byName["vapp.mycompany.com"]
	require.Equal(t, operatorsv1alpha1.ValidatingAdmissionWebhook, v.Type)
	require.Equal(t, "/validate-mycompany-com-v1-app", *v.WebhookPath)

	c := byName["capps.mycompany.com"]
	require.Equal(t, operatorsv1alpha1.ConversionWebhook, c.Type)
	require.Equal(t, []string{"apps.mycompany.com"}, c.ConversionCRDs)
	require.Equal(t, "/convert", *c.WebhookPath)
	require.Equal(t, []string{"v1"}, c.AdmissionReviewVersions)
}

func TestTheCRDsConversionNamesTheServiceOLMMakesInTheInstallNamespace(t *testing.T) {
	for _, ns := range []string{DefaultInstallNamespace, "openshift-operators"} {
		o := options()
		o.InstallNamespace = ns
		crd := findManifest(t, generate(t, o), "CustomResourceDefinition", "apps.mycompany.com")
		svc, _, _ := unstructured.NestedStringMap(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service")
		require.Equal(t, "controller-manager-service", svc["name"])
		require.Equal(t, ns, svc["namespace"])
	}
}

func TestLabelsNameTheChannels(t *testing.T) {
	o := options()
	o.Channels, o.DefaultChannel = []string{"fast", "stable"}, "stable"
	labels := generate(t, o).Labels()
	require.Equal(t, "fast,stable", labels["operators.operatorframework.io.bundle.channels.v1"])
	require.Equal(t, "stable", labels["operators.operatorframework.io.bundle.channel.default.v1"])
	require.Equal(t, "app-operator", labels["operators.operatorframework.io.bundle.package.v1"])
	require.Equal(t, "tests/scorecard/", labels["operators.operatorframework.io.test.config.v1"])
}

func TestTheScorecardTestsRunTheReleaseScorecardImage(t *testing.T) {
	stages, _, _ := unstructured.NestedSlice(generate(t, options()).scorecard.Object, "stages")
	tests := stages[0].(map[string]any)["tests"].([]any)
	require.Equal(t, "quay.io/operator-framework/scorecard-test:v1", tests[0].(map[string]any)["image"], "operator-sdk's own tests keep their image")
	require.Equal(t, "quay.io/mycompany/app-operator-scorecard:v0.5.0", tests[1].(map[string]any)["image"])
}

func TestWriteLaysOutTheBundleAndItsDockerfileWithTheSameLabels(t *testing.T) {
	dir := t.TempDir()
	b := generate(t, options())
	require.NoError(t, b.Write(filepath.Join(dir, "bundle"), filepath.Join(dir, "bundle.Dockerfile")))
	for _, f := range []string{"manifests/app-operator.clusterserviceversion.yaml", "manifests/mycompany.com_apps.yaml",
		"manifests/metrics-service_v1_service.yaml", "manifests/app-viewer-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"metadata/annotations.yaml", "tests/scorecard/config.yaml"} {
		require.FileExists(t, filepath.Join(dir, "bundle", f))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "bundle", "metadata", "annotations.yaml"))
	require.NoError(t, err)
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	require.Equal(t, b.Labels(), doc.Annotations)
	dockerfile, err := os.ReadFile(filepath.Join(dir, "bundle.Dockerfile"))
	require.NoError(t, err)
	for k, v := range b.Labels() {
		require.Contains(t, string(dockerfile), "LABEL "+k+"="+v+"\n")
	}

	// Writing again gives the same bytes: nothing depends on the clock.
	again := t.TempDir()
	require.NoError(t, generate(t, options()).Write(filepath.Join(again, "bundle"), filepath.Join(again, "bundle.Dockerfile")))
	first, err := os.ReadFile(filepath.Join(dir, "bundle", "manifests", "app-operator.clusterserviceversion.yaml"))
	require.NoError(t, err)
	second, err := os.ReadFile(filepath.Join(again, "bundle", "manifests", "app-operator.clusterserviceversion.yaml"))
	require.NoError(t, err)
	require.Equal(t, first, second)
}

func TestValidateNamesEveryBadOption(t *testing.T) {
	o := Options{Version: "five", CreatedAt: "yesterday", SkipRange: "sometimes", Channels: []string{"fast,stable"}, DefaultChannel: "stable"}
	err := o.Validate()
	for _, want := range []string{`version "five"`, "the manager image is required", "the scorecard image is required",
		`createdAt "yesterday" is not RFC 3339`, `skipRange "sometimes"`, `channel "fast,stable" is not a channel name`,
		`the default channel "stable" must be one of the channels [fast,stable]`, "the install namespace is required"} {
		require.ErrorContains(t, err, want)
	}
	_, err = Generate(nil, o)
	require.ErrorContains(t, err, "bundle options:", "nothing is generated from bad options")
}

func TestManifestsWithoutTheInstallInputsAreRefused(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "no ClusterServiceVersion base among the manifests"},
		{"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: c}\n", "no Deployment among the manifests"},
	} {
		_, err := Generate(strings.NewReader(tc.input), options())
		require.EqualError(t, err, tc.want)
	}
}

func TestASampleOfAnUnservedVersionIsRefused(t *testing.T) {
	raw, err := os.ReadFile("testdata/manifests.yaml")
	require.NoError(t, err)
	unserved := strings.Replace(string(raw), "{name: v1alpha1, served: true,", "{name: v1alpha1, served: false,", 1)
	require.NotEqual(t, string(raw), unserved, "the test data's CRD serves v1alpha1 beside the storage version v1")
	_, err = Generate(strings.NewReader(unserved), options())
	require.EqualError(t, err, "sample App app-sample-old: no CRD serves App mycompany.com/v1alpha1; write it in a served version")
}

func manifestNames(b *Bundle) []string {
	var names []string
	for _, m := range b.manifests {
		names = append(names, m.GetKind()+"/"+m.GetName())
	}
	sort.Strings(names)
	return names
}

func findManifest(t *testing.T, b *Bundle, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, m := range b.manifests {
		if m.GetKind() == kind && m.GetName() == name {
			return m
		}
	}
	t.Fatalf("no %s %s in the bundle", kind, name)
	return nil
}
