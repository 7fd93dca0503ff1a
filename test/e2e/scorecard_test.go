package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	"github.com/stretchr/testify/require"
)

func TestScorecardCustomTestsPass(t *testing.T) {
	results, skipped, err := cluster.RunScorecard(context.Background(), filepath.Join(root, "bundle", "tests", "scorecard", "config.yaml"))
	require.NoError(t, err)
	require.Len(t, results, 2)
	for _, r := range results {
		require.Equal(t, v1alpha3.PassState, r.State, "%s: %v", r.Name, r.Errors)
	}
	require.Contains(t, skipped, "olm-bundle-validation-test", "operator-sdk's suites are listed")
}
