package localcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// StartForTest starts a fresh cluster with OLM for one test of a suite, its state under
// .cache/<suite>/<test>-<time>, and stops it when the test ends: its logs are kept if the test
// failed, and removed otherwise.
func StartForTest(t testing.TB, suite string) *Cluster {
	t.Helper()
	root := RepoRoot()
	dir := filepath.Join(root, ".cache", suite, strings.ReplaceAll(t.Name(), "/", "-")+"-"+time.Now().Format("150405"))
	start := time.Now()
	c, err := StartWithOLM(context.Background(), Options{Name: "app-" + suite, Dir: dir, Bin: filepath.Join(root, "bin")}, root)
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Logf("started the cluster and OLM in %.1fs", time.Since(start).Seconds())
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			t.Logf("logs of every component are kept in %s", dir)
		} else {
			os.RemoveAll(dir)
		}
	})
	return c
}
