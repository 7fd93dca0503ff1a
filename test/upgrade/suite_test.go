// Package upgrade runs App Operator's release train through the real OLM: upgrades along the
// stable channel, the skipRange jump, rollback, manual approval, an upgrade OLM must refuse,
// and an upgrade under load. Every scenario gets a fresh local control plane, so that each
// starts from a clean App CRD, and runs each release's real manager, rebuilt from the commit
// catalog/releases.yaml records for it.
package upgrade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/test/localcluster"
)

var root = localcluster.RepoRoot()

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "upgrade", nil)) }

// env is one scenario's cluster with OLM, and the kubelet that runs whichever release OLM
// deploys.
type env struct {
	*localcluster.Cluster
	kubelet *localcluster.Kubelet
}

// newEnv starts a fresh cluster with OLM for one test; its logs are kept if the test fails.
func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(root, ".cache", "upgrade", strings.ReplaceAll(t.Name(), "/", "-")+"-"+time.Now().Format("150405"))
	c, err := localcluster.StartWithOLM(ctx, localcluster.Options{Name: "app-upgrade", Dir: dir, Bin: filepath.Join(root, "bin")}, root)
	require.NoError(t, err)
	e := &env{Cluster: c}
	t.Cleanup(func() {
		if e.kubelet != nil {
			e.kubelet.Stop()
		}
		require.NoError(t, c.Stop())
		if t.Failed() {
			t.Logf("logs of every component are kept in %s", dir)
		} else {
			os.RemoveAll(dir)
		}
	})
	e.kubelet = c.RunKubelet(func(ctx context.Context, csv string) (string, error) {
		return localcluster.ManagerFor(ctx, root, c.Bin, csv)
	})
	return e
}

// releases are the versions of the stable channel, oldest first.
func releases(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "catalog", localcluster.PackageName, "channels", localcluster.Channel+".yaml"))
	require.NoError(t, err)
	var ch struct {
		Entries []struct{ Name string } `json:"entries"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &ch))
	var vs []string
	for _, e := range ch.Entries {
		vs = append(vs, strings.TrimPrefix(e.Name, localcluster.PackageName+".v"))
	}
	require.GreaterOrEqual(t, len(vs), 2, "the release train needs two releases at least")
	return vs
}

func csvName(version string) string { return localcluster.PackageName + ".v" + version }

// storedVersions is what the release plan (docs/releases.md) says the CRD's
// status.storedVersions hold once a release runs: v1alpha1 until 0.2.0 migrates to v1.
func storedVersions(version string) []string {
	if version == "0.1.0" {
		return []string{"v1alpha1"}
	}
	return []string{"v1"}
}

// waitRelease waits until a release is installed and settled: its ClusterServiceVersion
// Succeeded, its manager runs, OLM's webhook settings are in the CRD, and the CRD's stored
// versions are what the plan says.
func (e *env) waitRelease(t *testing.T, version string) {
	t.Helper()
	ctx := context.Background()
	_, err := e.WaitForCSV(ctx, csvName(version), 5*time.Minute)
	require.NoError(t, err)
	_, err = e.kubelet.WaitFor(ctx, csvName(version), 5*time.Minute)
	require.NoError(t, err)
	require.NoError(t, e.WaitForConversionWebhook(ctx))
	want := storedVersions(version)
	require.NoError(t, e.Poll(ctx, 2*time.Minute, fmt.Sprintf("storedVersions %v", want), func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd); err != nil {
			return false, err
		}
		return fmt.Sprint(crd.Status.StoredVersions) == fmt.Sprint(want), nil
	}))
}

// installWithFleet publishes a release, subscribes to it with automatic approval, waits for it
// to settle and creates apps Apps under it; it returns the fleet as it then stands.
func (e *env) installWithFleet(t *testing.T, version string, apps int) fleetState {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, e.PublishCatalog(ctx, root, version))
	require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{}))
	e.waitRelease(t, version)
	e.createFleet(t, apps)
	return e.snapshot(t)
}
