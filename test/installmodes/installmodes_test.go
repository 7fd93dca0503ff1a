package installmodes

import (
	"context"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/test/localcluster"
)

// outside is a namespace no install targets.
const outside = "no-operator"

// TestEachInstallModeServesItsTargetNamespacesOnly installs the head of the stable channel
// three times side by side, once per namespaced install mode. Each install admits (defaulting
// and validating) and reconciles the Apps of its target namespaces. No install's webhooks
// or controllers touch an App anywhere else, and no install's ServiceAccount may read or write
// Apps or their children in a namespace it does not target. A rollback of such an install to
// a release that supports all namespaces only is refused by OLM, saying why.
func TestEachInstallModeServesItsTargetNamespacesOnly(t *testing.T) {
	ctx := context.Background()
	c := localcluster.StartForTest(t, "installmodes")
	rel, err := localcluster.BuildReleases(ctx, localcluster.RepoRoot())
	require.NoError(t, err)
	head := rel.Head()
	require.NoError(t, c.PublishCatalog(ctx, rel, head.Version))
	createNamespace(t, c, outside)

	installs := []install{
		{operatorsv1alpha1.InstallModeTypeOwnNamespace, "team-own", []string{"team-own"}},
		{operatorsv1alpha1.InstallModeTypeSingleNamespace, "ops-single", []string{"team-single"}},
		{operatorsv1alpha1.InstallModeTypeMultiNamespace, "ops-multi", []string{"team-multi-a", "team-multi-b"}},
	}
	for _, in := range installs {
		t.Run(string(in.mode), func(t *testing.T) {
			start := time.Now()
			subscribe(t, c, in, head.CSVName())
			t.Logf("installed for %v in %.1fs", in.targets, time.Since(start).Seconds())
			for _, ns := range in.targets {
				assertServed(t, c, ns)
			}
		})
	}

	// Every install has reconciled Apps by now: one that saw the App outside would have too.
	assertLeftAlone(t, c, outside)
	for _, in := range installs {
		for _, ns := range in.targets {
			assertAccess(t, c, in, ns, true)
		}
		assertAccess(t, c, in, outside, false)
		for _, other := range installs {
			if other.namespace != in.namespace {
				for _, ns := range other.targets {
					assertAccess(t, c, in, ns, false)
				}
			}
		}
	}

	t.Run("rollback to a release for all namespaces only", func(t *testing.T) {
		assertRollbackRefused(t, c, installs[1], rel)
	})
}

// firstWithEveryInstallMode is the first release that supports more than AllNamespaces.
var firstWithEveryInstallMode = semver.MustParse("1.0.0")

// assertRollbackRefused rolls an install back to the newest release before
// firstWithEveryInstallMode, as docs/releases.md says, and checks that OLM refuses it, saying
// why: that release supports the AllNamespaces install mode only. The install's Apps and their
// workloads stay.
func assertRollbackRefused(t *testing.T, c *localcluster.Cluster, in install, rel *localcluster.Releases) {
	ctx := context.Background()
	var previous string
	for _, v := range rel.Versions() {
		if semver.MustParse(v).LT(firstWithEveryInstallMode) {
			previous = release.CSVName(v)
		}
	}
	sub := &operatorsv1alpha1.Subscription{}
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: localcluster.PackageName}, sub))
	require.NoError(t, c.Client.Delete(ctx, sub))
	require.NoError(t, c.Client.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: in.namespace, Name: rel.Head().CSVName()}}))

	sub = localcluster.NewSubscription(in.namespace, localcluster.PackageName+"-2", localcluster.Subscription{StartingCSV: previous, Manual: true})
	require.NoError(t, c.Client.Create(ctx, sub))
	require.NoError(t, c.ApproveFor(ctx, client.ObjectKeyFromObject(sub), previous))
	refused, err := c.WaitForCSVIn(ctx, in.namespace, previous, operatorsv1alpha1.CSVPhaseFailed, 5*time.Minute)
	require.NoError(t, err)
	require.Equal(t, operatorsv1alpha1.CSVReasonUnsupportedOperatorGroup, refused.Status.Reason)
	require.Contains(t, refused.Status.Message, string(in.mode)+" InstallModeType not supported")

	for _, ns := range in.targets {
		key := client.ObjectKey{Namespace: ns, Name: localcluster.ScopeAppName}
		require.NoError(t, c.Client.Get(ctx, key, &appv1.App{}))
		require.NoError(t, c.Client.Get(ctx, key, &appsv1.Deployment{}), "the workload stays")
	}
}

// assertServed checks that an App in ns is defaulted, validated and reconciled.
func assertServed(t *testing.T, c *localcluster.Cluster, ns string) {
	t.Helper()
	require.NoError(t, c.CheckServed(context.Background(), ns))
}

// assertLeftAlone checks that no webhook sees an App in ns, and no controller reconciles it.
func assertLeftAlone(t *testing.T, c *localcluster.Cluster, ns string) {
	t.Helper()
	_, err := c.CheckLeftAlone(context.Background(), ns, 15*time.Second)
	require.NoError(t, err)
}

// assertAccess checks, as an install's ServiceAccount, whether it may read Apps and
// Deployments in ns.
func assertAccess(t *testing.T, c *localcluster.Cluster, in install, ns string, want bool) {
	t.Helper()
	got, err := c.MayAccess(context.Background(), in.namespace, localcluster.DeploymentName, ns)
	require.NoError(t, err)
	require.Equal(t, want, got, "%s install's ServiceAccount may read Apps and Deployments in %s", in.mode, ns)
}
