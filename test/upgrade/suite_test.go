// Package upgrade runs App Operator's release train through the real OLM: one fleet of Apps
// rides it up the stable channel, back down through every release and forward again by the
// skipRange jump, with manual approval and under load; and apart from it, an upgrade OLM must
// refuse and a manager image the registry lacks. Each test gets a fresh local control plane,
// so that each starts from a clean App CRD, and runs each release's real manager, rebuilt from
// the commit catalog/releases.yaml records for it.
package upgrade

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

var root = localcluster.RepoRoot()

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "upgrade", nil)) }

// env is one scenario's cluster with OLM, and App Operator's releases as users pull them.
type env struct {
	*localcluster.Cluster
	rel *localcluster.Releases
}

// newEnv starts a fresh cluster with OLM for one test; its logs are kept if the test fails.
func newEnv(t *testing.T) *env {
	t.Helper()
	rel, err := localcluster.BuildReleases(context.Background(), root)
	require.NoError(t, err)
	return &env{Cluster: localcluster.StartForTest(t, "upgrade"), rel: rel}
}

// releases are the versions of the release train, oldest first: every cut release and the one
// being prepared.
func (e *env) releases(t *testing.T) []string {
	t.Helper()
	vs := e.rel.Versions()
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

// servesV1alpha1 is what the release plan says of v1alpha1: served until 0.6.0.
func servesV1alpha1(version string) bool {
	return semver.MustParse(version).LT(semver.MustParse("0.6.0"))
}

// publish publishes the catalog as it stood when a release was the newest.
func (e *env) publish(t *testing.T, version string) {
	t.Helper()
	start := time.Now()
	require.NoError(t, e.PublishCatalog(context.Background(), e.rel, version))
	t.Logf("published the catalog up to %s in %.1fs", version, time.Since(start).Seconds())
}

// waitRelease waits until a release is installed and settled: its ClusterServiceVersion
// Succeeded, its manager's pods rolled out and ready on the node, OLM's webhook settings in
// the CRD, every webhook answering, and the CRD's stored versions what the plan says. It
// returns the manager.
func (e *env) waitRelease(t *testing.T, version string) *localcluster.Manager {
	t.Helper()
	return e.waitSettled(t, version, storedVersions(version))
}

// waitSettled is waitRelease with the stored versions a scenario expects, where they are not
// the plan's for an upgrade (after a rollback, say).
func (e *env) waitSettled(t *testing.T, version string, want []string) *localcluster.Manager {
	t.Helper()
	ctx := context.Background()
	start, last := time.Now(), time.Now()
	var phases []string
	took := func(phase string) {
		phases = append(phases, fmt.Sprintf("%s %.1fs", phase, time.Since(last).Seconds()))
		last = time.Now()
	}
	defer func() {
		t.Logf("release %s settled in %.1fs (%s)", version, time.Since(start).Seconds(), strings.Join(phases, ", "))
	}()
	_, err := e.WaitForCSV(ctx, csvName(version), 5*time.Minute)
	require.NoError(t, err)
	took("CSV")
	m, err := e.WaitForManager(ctx, csvName(version), 5*time.Minute)
	require.NoError(t, err)
	took("manager")
	require.NoError(t, e.WaitForCRD(ctx))
	took("CRD")
	require.NoError(t, e.WaitForWebhooks(ctx))
	took("webhooks")
	// On the way forward from 0.1.0, 0.6.0's migration of 200 Apps trims storedVersions 58 to
	// 75 s after its CSV succeeds (2026-12-07): its first leader's rewrites are refused while
	// OLM rotates the webhooks' certificate, and the leader of the rollout that follows
	// rewrites the 200 Apps in 50 s, one patch each, as its controller takes them over.
	require.NoError(t, e.Poll(ctx, 5*time.Minute, fmt.Sprintf("storedVersions %v", want), func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd); err != nil {
			return false, err
		}
		return fmt.Sprint(crd.Status.StoredVersions) == fmt.Sprint(want), nil
	}))
	took("storedVersions")
	return m
}

// assertDeprecation waits until OLM says on the Subscription what the catalog says of the
// installed release: the record's deprecation message, or no deprecation at all.
func (e *env) assertDeprecation(t *testing.T, version string) {
	t.Helper()
	r, ok := e.rel.Record.Find(version)
	require.True(t, ok, version)
	want := ""
	if r.Deprecated != nil {
		want = fmt.Sprintf("olm.bundle/%s: %s", csvName(version), r.Deprecated.Message) // as OLM words it
	}
	var got string
	require.NoError(t, e.Poll(context.Background(), 2*time.Minute, fmt.Sprintf("the Subscription to say %s is deprecated: %q", version, want), func(ctx context.Context) (bool, error) {
		sub, err := e.CurrentSubscription(ctx)
		if err != nil {
			return false, err
		}
		got = ""
		if c := sub.Status.GetCondition(operatorsv1alpha1.SubscriptionBundleDeprecated); c.Status == corev1.ConditionTrue {
			got = c.Message
		}
		return sub.Status.InstalledCSV == csvName(version) && got == want, nil
	}), "the Subscription says %q", got)
}

// installWithFleet publishes a release, subscribes to it with automatic approval, waits for it
// to settle and creates a fleet of apps Apps under it; it returns the fleet as it then stands.
func (e *env) installWithFleet(t *testing.T, version string, apps int, f fleet) fleetState {
	t.Helper()
	ctx := context.Background()
	e.publish(t, version)
	require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{}))
	e.waitRelease(t, version)
	f.legacy = servesV1alpha1(version)
	e.createFleet(t, apps, f)
	return e.snapshot(t)
}
