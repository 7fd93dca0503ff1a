package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
	"github.com/mycompany/app-operator/test/localcluster"
)

// badVersion is the throwaway release whose CRD would invalidate every existing App.
const badVersion = "9.0.0"

// TestAnUpgradeThatWouldInvalidateAppsIsRefused publishes a release whose CRD requires a new
// field no existing App has. OLM validates the existing Apps against it, refuses the upgrade
// with a status that says why, and changes nothing.
func TestAnUpgradeThatWouldInvalidateAppsIsRefused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)
	head := versions[len(versions)-1]

	before := e.installWithFleet(t, head, 6, fleet{})
	crdBefore := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, e.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crdBefore))

	// Publish the head's catalog plus the throwaway release.
	dir := filepath.Join(e.Dir, "catalog-refused")
	require.NoError(t, image.CopyTree(filepath.Join(e.Dir, "catalog-"+head), dir))
	bad, err := e.rel.BundleImage(badBundle(t, e, head), "v"+badVersion)
	require.NoError(t, err)
	require.NoError(t, e.Push(ctx, bad))
	rendered, err := publish.Render(ctx, filepath.Join(e.Bin, "opm"), bad)
	require.NoError(t, err)
	require.NoError(t, catalog.Add(dir, rendered, []string{localcluster.Channel}, localcluster.Channel, nil))
	require.NoError(t, e.ServeCatalogDir(ctx, e.rel, dir, "v"+badVersion))

	plan, err := e.InstallPlanFor(ctx, csvName(badVersion), 3*time.Minute)
	require.NoError(t, err)
	require.NoError(t, e.Poll(ctx, 3*time.Minute, "OLM to refuse the install plan of "+csvName(badVersion), func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
			return false, err
		}
		return plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseFailed, nil
	}))
	var message string
	for _, c := range plan.Status.Conditions {
		message += c.Message
	}
	require.Contains(t, message, "error validating existing CRs against new CRD's schema")
	require.Contains(t, message, "spec.owner", "the refusal names the field the Apps lack")

	// Nothing changed: the CRD, the running release, the Apps and their workloads.
	crdAfter := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, e.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crdAfter))
	require.Equal(t, crdBefore.Spec.Versions, crdAfter.Spec.Versions)
	refused := &operatorsv1alpha1.ClusterServiceVersion{}
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(badVersion)}, refused)
	require.True(t, err != nil || refused.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded, "the refused release is not installed")
	_, running, err := e.Managers(ctx)
	require.NoError(t, err)
	require.Equal(t, csvName(head), running, "the head's manager still runs")
	e.assertFleetUnchanged(t, before)

	// And it still reconciles.
	e.createApp(t, "after-refusal")
}

// badBundle derives the throwaway release from the head's bundle, as published (its manager
// pinned by digest): its CRD requires spec.owner, and has only v1 and no conversion webhook
// (so that OLM's validation of existing Apps is binding), as the head's has since 1.0.0.
func badBundle(t *testing.T, e *env, head string) string {
	t.Helper()
	replaces := csvName(head)
	src, dst := e.rel.Images[head].PinnedBundle, filepath.Join(e.Dir, "bad-bundle")
	require.NoError(t, image.CopyTree(src, dst))
	manifests := filepath.Join(dst, "manifests")

	edit(t, filepath.Join(manifests, "mycompany.com_apps.yaml"), func(crd map[string]any) {
		spec := crd["spec"].(map[string]any)
		spec["conversion"] = map[string]any{"strategy": "None"}
		var kept []any
		for _, v := range spec["versions"].([]any) {
			version := v.(map[string]any)
			if version["name"] != "v1" {
				continue
			}
			appSpec := version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
			appSpec["required"] = append(appSpec["required"].([]any), "owner")
			appSpec["properties"].(map[string]any)["owner"] = map[string]any{"type": "string", "description": "Who owns the App."}
			kept = append(kept, version)
		}
		spec["versions"] = kept
	})
	edit(t, filepath.Join(manifests, "app-operator.clusterserviceversion.yaml"), func(csv map[string]any) {
		meta := csv["metadata"].(map[string]any)
		meta["name"] = csvName(badVersion)
		delete(meta["annotations"].(map[string]any), "olm.skipRange")
		spec := csv["spec"].(map[string]any)
		spec["version"], spec["replaces"] = badVersion, replaces
		var owned []any
		for _, o := range spec["customresourcedefinitions"].(map[string]any)["owned"].([]any) {
			if o.(map[string]any)["version"] == "v1" {
				owned = append(owned, o)
			}
		}
		spec["customresourcedefinitions"].(map[string]any)["owned"] = owned
		var hooks []any
		for _, h := range spec["webhookdefinitions"].([]any) {
			if h.(map[string]any)["type"] != "ConversionWebhook" {
				hooks = append(hooks, h)
			}
		}
		spec["webhookdefinitions"] = hooks
		meta["annotations"].(map[string]any)["alm-examples"] = "[]"
	})
	return dst
}

func edit(t *testing.T, path string, change func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &obj))
	change(obj)
	raw, err = yaml.Marshal(obj)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}
