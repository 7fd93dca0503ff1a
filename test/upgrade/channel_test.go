package upgrade

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestUpgradeAlongTheChannel installs the first release with automatic approval, creates a
// fleet of Apps (half of them through v1alpha1, each with a pod on the real node), then
// publishes each later release in turn and lets OLM upgrade to it. Each upgrade replaces the
// manager's pod; no workload pod restarts.
func TestUpgradeAlongTheChannel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := e.releases(t)

	before := e.installWithFleet(t, versions[0], 30, fleet{real: 15})
	managers, _, err := e.Managers(ctx)
	require.NoError(t, err)
	pod := managers[0].Pod.UID

	for i, v := range versions[1:] {
		t.Logf("publishing %s", v)
		var m *localcluster.Manager
		upgrade := func() {
			e.publish(t, v)
			m = e.waitRelease(t, v)
		}
		if i < len(versions)-2 {
			upgrade()
		} else {
			// The last upgrade, to the release being prepared, under a client writing and
			// reading Apps (through v1alpha1 too if both releases serve it). It keeps the
			// webhooks' certificate, and both releases run two draining webhook pods, so
			// every write and read passes (docs/faults.md: a release that adds a webhook
			// makes it fail open).
			cert := e.certificate(t).UID
			f := e.probe(t, "upgrade to "+v, versions[i], v, upgrade)
			e.assertCertificateKept(t, cert, versions[i], v)
			require.Zero(t, f.Refused+f.Failed, "the upgrade to %s: %s", v, f.Report("upgrade to "+v))
		}
		require.NotEqual(t, pod, m.Pod.UID, "the upgrade to %s replaced the manager's pod", v)
		pod = m.Pod.UID
		e.assertFleetUnchanged(t, before)
	}
}
