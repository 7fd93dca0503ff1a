package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"

	"github.com/mycompany/app-operator/test/localcluster"
)

// scorecard runs App Operator's scorecard tests against the local cluster and prints their
// results as scorecard's text output does.
func scorecard(ctx context.Context, root, dir, bin string) error {
	c, err := localcluster.Connect(dir, clusterName, bin)
	if err != nil {
		return err
	}
	rel, err := localcluster.BuildReleases(ctx, root)
	if err != nil {
		return err
	}
	if err := c.Push(ctx, rel.Extra...); err != nil {
		return err
	}
	results, skipped, err := c.RunScorecard(ctx, filepath.Join(root, "bundle", "tests", "scorecard", "config.yaml"))
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		fmt.Printf("--------------------------------------------------------------------------------\n")
		fmt.Printf("Test: %s\nState: %s\n", r.Name, r.State)
		if r.Log != "" {
			fmt.Printf("Log:\n    %s\n", strings.ReplaceAll(r.Log, "\n", "\n    "))
		}
		for _, e := range r.Errors {
			fmt.Printf("Error: %s\n", e)
		}
		for _, s := range r.Suggestions {
			fmt.Printf("Suggestion: %s\n", s)
		}
		if r.State != v1alpha3.PassState {
			failed++
		}
	}
	fmt.Printf("--------------------------------------------------------------------------------\n")
	fmt.Printf("%d of %d tests passed. Skipped (operator-sdk's scorecard-test image cannot be pulled here; run `operator-sdk scorecard bundle` on a cluster): %s\n",
		len(results)-failed, len(results), strings.Join(skipped, ", "))
	if failed > 0 {
		return fmt.Errorf("%d scorecard tests failed", failed)
	}
	return nil
}
