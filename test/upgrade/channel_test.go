package upgrade

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mycompany/app-operator/test/localcluster"
)

// TestAFleetRidesTheReleaseTrain takes one fleet of 200 Apps through the whole release train
// on one cluster, as a user who keeps App Operator installed does: up the channel one release
// at a time, back down through every release, and forward again from the first release to the
// head by manual approval, under load. Each leg starts where the one before ended, so the
// rollback starts from a head that upgrades made, not from a fresh install, and the way
// forward again crosses the migration the first release makes necessary once more. Every
// release's upgrade and rollback edge is crossed once; a leg that fails ends the ride.
func TestAFleetRidesTheReleaseTrain(t *testing.T) {
	e := newEnv(t)
	versions := e.releases(t)
	// 15 Apps run a pod on the real node, the other 185 on kwok's fake nodes.
	before := e.installWithFleet(t, versions[0], 200, fleet{real: 15})

	if !t.Run("up the channel", func(t *testing.T) { before = e.upTheChannel(t, versions, before) }) {
		return
	}
	if !t.Run("back down through every release", func(t *testing.T) { before = e.backThroughEveryRelease(t, versions, before) }) {
		return
	}
	t.Run("forward again under load", func(t *testing.T) { e.forwardUnderLoad(t, versions, before) })
}

// upTheChannel publishes each release after the first in turn and lets OLM upgrade to it with
// automatic approval. Each upgrade replaces the manager's pod; no App changes and no workload
// pod restarts. It returns the fleet as it stands at the head.
func (e *env) upTheChannel(t *testing.T, versions []string, before fleetState) fleetState {
	ctx := context.Background()
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
	return before
}
