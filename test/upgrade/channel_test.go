package upgrade

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpgradeAlongTheChannel installs the first release with automatic approval, creates a
// fleet of Apps, then publishes each later release in turn and lets OLM upgrade to it.
func TestUpgradeAlongTheChannel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	versions := releases(t)

	before := e.installWithFleet(t, versions[0], 30)

	for _, v := range versions[1:] {
		t.Logf("publishing %s", v)
		require.NoError(t, e.PublishCatalog(ctx, root, v))
		e.waitRelease(t, v)
		e.assertFleetUnchanged(t, before)
	}
}
