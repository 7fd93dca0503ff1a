// Package alerts unit-tests App Operator's alerting rules with promtool, built from the
// Prometheus module in hack/tools/prom.
package alerts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const root = "../.."

func TestAlertingRules(t *testing.T) {
	promtool, err := filepath.Abs(filepath.Join(root, "bin", "promtool"))
	require.NoError(t, err)
	_, err = os.Stat(promtool)
	require.NoError(t, err, "promtool is built by make tools")

	// promtool reads Prometheus rule files: the groups of the PrometheusRule.
	raw, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	require.NoError(t, err)
	var rule struct {
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &rule))
	groups, err := yaml.Marshal(rule.Spec)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules.yaml"), groups, 0o644))
	tests, err := os.ReadFile("rules_test.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules_test.yaml"), tests, 0o644))

	out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "rules.yaml")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(promtool, "test", "rules", "rules_test.yaml")
	cmd.Dir = dir
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("%s", out)
}

// TestEveryAlertHasARunbookAndATest checks that each alert links a runbook that exists and
// is exercised by the promtool tests.
func TestEveryAlertHasARunbookAndATest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	require.NoError(t, err)
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert       string            `json:"alert"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &rule))
	tests, err := os.ReadFile("rules_test.yaml")
	require.NoError(t, err)
	n := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			n++
			url := r.Annotations["runbook_url"]
			require.NotEmpty(t, url, r.Alert)
			_, err := os.Stat(filepath.Join(root, "docs", "runbooks", r.Alert+".md"))
			require.NoError(t, err, "runbook of %s", r.Alert)
			require.Contains(t, url, "docs/runbooks/"+r.Alert+".md")
			require.Contains(t, string(tests), "alertname: "+r.Alert, "promtool tests %s", r.Alert)
		}
	}
	require.Equal(t, 5, n, "operator down, reconcile errors, App not Available, App Degraded, queue growing")
}
