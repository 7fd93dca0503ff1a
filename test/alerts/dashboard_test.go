package alerts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// exposed are the metric families the operator's metrics endpoint serves, and up, which
// Prometheus adds.
var exposed = regexp.MustCompile(`^(operator_[a-z_]+|controller_runtime_[a-z_]+|workqueue_[a-z_]+|rest_client_[a-z_]+|go_[a-z_]+|process_[a-z_]+|leader_election_[a-z_]+|up)$`)

func TestTheDashboardQueriesWhatTheOperatorExposes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "config", "grafana", "app-operator-dashboard.json"))
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)
	// A selector: a metric name followed by its label matchers or its range.
	selector := regexp.MustCompile(`([a-z_]+)[{[]`)
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			names := selector.FindAllStringSubmatch(target.Expr, -1)
			require.NotEmpty(t, names, "panel %q queries no metric: %s", p.Title, target.Expr)
			for _, m := range names {
				require.Regexp(t, exposed, m[1], "panel %q queries %s", p.Title, m[1])
			}
		}
	}
}
