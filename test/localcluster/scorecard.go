package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	"sigs.k8s.io/yaml"
)

// ScorecardSuite is the suite label of App Operator's own scorecard tests.
const ScorecardSuite = "app"

// RunScorecard runs the tests of App Operator's suite in a scorecard configuration the way
// scorecard would run their image, but as the local binary bin, against the cluster of
// kubeconfig. The basic and olm suites run operator-sdk's image and need a container runtime;
// they are listed as skipped.
func RunScorecard(ctx context.Context, configPath, bin, kubeconfig string) (results []v1alpha3.TestResult, skipped []string, err error) {
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return nil, nil, err
	}
	var cfg v1alpha3.Configuration
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", configPath, err)
	}
	for _, stage := range cfg.Stages {
		for _, t := range stage.Tests {
			if t.Labels["suite"] != ScorecardSuite {
				skipped = append(skipped, t.Labels["test"])
				continue
			}
			cmd := exec.CommandContext(ctx, bin, t.Entrypoint[1:]...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
			out, err := cmd.Output()
			var status v1alpha3.TestStatus
			if jerr := json.Unmarshal(out, &status); jerr != nil {
				return nil, nil, fmt.Errorf("test %s printed no TestStatus (%v, %v): %s", t.Labels["test"], err, jerr, out)
			}
			results = append(results, status.Results...)
		}
	}
	return results, skipped, nil
}
