// Package gitops applies config/gitops to a fresh local cluster with OLM, as Flux and Argo CD
// apply it, and waits with kstatus, as Flux's health checks do, until App Operator runs and
// the App is Available.
package gitops

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

var root = localcluster.RepoRoot()

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "gitops", nil)) }

// TestTheGitOpsManifestsInstallAppOperatorAndRunAnApp publishes the release being prepared as
// a release publishes it (its images and its catalog image, tagged), applies
// config/gitops/operator, waits until the objects it holds, the App CRD and the manager's
// Deployment read Current (the health checks of the Flux Kustomization), then applies
// config/gitops/app and waits until the App reads Current.
func TestTheGitOpsManifestsInstallAppOperatorAndRunAnApp(t *testing.T) {
	ctx := context.Background()
	rel, err := localcluster.BuildReleases(ctx, root)
	require.NoError(t, err)
	c := localcluster.StartForTest(t, "gitops")
	head := rel.Head().Version
	catalog, err := c.PushCatalog(ctx, rel, head)
	require.NoError(t, err)

	start := time.Now()
	operator := build(t, "operator")
	catalogSource := find(t, operator, "CatalogSource")
	image, _, _ := unstructured.NestedString(catalogSource.Object, "spec", "image")
	require.Equal(t, catalog.Ref(), image, "the catalog of the release being prepared")
	apply(t, c, operator)
	crd := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "apps.mycompany.com")
	manager := object("apps/v1", "Deployment", "app-operator", "app-operator-controller-manager")
	waitCurrent(t, c, 5*time.Minute, append(operator, crd, manager))
	t.Logf("App Operator installed through OLM in %.1fs", time.Since(start).Seconds())

	start = time.Now()
	app := build(t, "app")
	apply(t, c, app)
	// kstatus reads an object without a status as Current, so an App is Current only once
	// its status describes its generation: wait for that, as kstatus would not.
	web := &appv1.App{}
	require.NoError(t, c.Poll(ctx, 3*time.Minute, "the App's status to describe it", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(find(t, app, "App")), web)
		return err == nil && web.Status.ObservedGeneration == web.Generation, err
	}))
	waitCurrent(t, c, 3*time.Minute, app)
	require.NoError(t, c.Client.Get(ctx, client.ObjectKeyFromObject(web), web))
	require.True(t, meta.IsStatusConditionTrue(web.Status.Conditions, appv1.ConditionAvailable), "Current means Available")
	require.Equal(t, int32(2), web.Status.AvailableReplicas)
	t.Logf("the App Available in %.1fs", time.Since(start).Seconds())
}

// TestTheFluxAndArgoCDManifestsApplyTheseFolders checks that what Flux and Argo CD are told
// to apply are the folders the test above applies, in that order.
func TestTheFluxAndArgoCDManifestsApplyTheseFolders(t *testing.T) {
	paths := func(objs []*unstructured.Unstructured, kind string, field ...string) []string {
		var out []string
		for _, o := range objs {
			if o.GetKind() == kind {
				p, _, _ := unstructured.NestedString(o.Object, field...)
				out = append(out, strings.TrimPrefix(p, "./"))
			}
		}
		return out
	}
	flux := build(t, "flux")
	require.ElementsMatch(t, []string{"config/gitops/operator", "config/gitops/app"}, paths(flux, "Kustomization", "spec", "path"))
	app := find(t, flux, "Kustomization", "app-operator-app")
	dependsOn, _, _ := unstructured.NestedSlice(app.Object, "spec", "dependsOn")
	require.Equal(t, []any{map[string]any{"name": "app-operator"}}, dependsOn, "the App waits for App Operator")

	argo := build(t, "argocd")
	require.ElementsMatch(t, []string{"config/gitops/operator", "config/gitops/app"}, paths(argo, "Application", "spec", "source", "path"))
	options, _, _ := unstructured.NestedStringSlice(find(t, argo, "Application", "app-operator-app").Object, "spec", "syncPolicy", "syncOptions")
	require.Contains(t, options, "SkipDryRunOnMissingResource=true", "the App's sync waits for its CRD")
}

// build runs kustomize on a folder of config/gitops and returns its objects.
func build(t *testing.T, folder string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := localcluster.Render(exec.Command(filepath.Join(root, "bin", "kustomize"), "build", filepath.Join(root, "config", "gitops", folder)))
	require.NoError(t, err)
	return objs
}

// apply applies objects with kubectl, server-side, as the GitOps tools do, again while the
// API server refuses them (an App, say, before OLM has injected its webhooks' CA).
func apply(t *testing.T, c *localcluster.Cluster, objs []*unstructured.Unstructured) {
	t.Helper()
	var manifest bytes.Buffer
	for _, o := range objs {
		raw, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		manifest.WriteString("---\n")
		manifest.Write(raw)
	}
	require.NoError(t, c.Poll(context.Background(), 2*time.Minute, "kubectl apply to succeed", func(context.Context) (bool, error) {
		cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), "--kubeconfig", c.Kubeconfig, "apply", "--server-side", "--field-manager=gitops", "-f", "-")
		cmd.Stdin = bytes.NewReader(manifest.Bytes())
		out, err := cmd.CombinedOutput()
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	}))
}

// waitCurrent waits until kstatus reads every object Current.
func waitCurrent(t *testing.T, c *localcluster.Cluster, timeout time.Duration, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, want := range objs {
		what := fmt.Sprintf("%s %s/%s to read Current", want.GetKind(), want.GetNamespace(), want.GetName())
		var last *status.Result
		err := c.Poll(context.Background(), timeout, what, func(ctx context.Context) (bool, error) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
				return false, err
			}
			res, err := status.Compute(got)
			if err != nil {
				return false, err
			}
			last = res
			return res.Status == status.CurrentStatus, nil
		})
		if last != nil {
			require.NoError(t, err, "kstatus last read %s: %s", last.Status, last.Message)
		}
		require.NoError(t, err)
	}
}

func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// find returns the object of a kind, and of a name when one is given.
func find(t *testing.T, objs []*unstructured.Unstructured, kind string, name ...string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && (len(name) == 0 || o.GetName() == name[0]) {
			return o
		}
	}
	t.Fatalf("no %s %v", kind, name)
	return nil
}
