// Package e2e installs App Operator from its catalog image with the real OLM on a local cluster
// with a real node (see package localcluster) and checks what a user sees. One file per feature.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mycompany/app-operator/test/localcluster"
)

var (
	root    = localcluster.RepoRoot()
	cluster *localcluster.Cluster
	// releases are App Operator's releases as users pull them; this suite installs the newest,
	// the one being prepared from the checkout.
	releases *localcluster.Releases
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.Main(m, "e2e", run))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir := filepath.Join(root, ".cache", "e2e", time.Now().Format("20060102-150405"))
	var err error
	if releases, err = localcluster.BuildReleases(ctx, root); err != nil {
		fmt.Fprintln(os.Stderr, "building the releases' images:", err)
		return 1
	}
	before, err := localcluster.TakeHostState()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = localcluster.StartWithOLM(ctx, localcluster.Options{Name: "app-e2e", Dir: dir, Bin: filepath.Join(root, "bin")}, root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	code := 1
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
			code = 1
		}
		// Nothing of the cluster stays on the machine: interfaces, mounts, iptables chains.
		if after, err := localcluster.TakeHostState(); err != nil || before.Diff(after) != "" {
			fmt.Fprintf(os.Stderr, "FAIL: the cluster's teardown left the machine changed: %v%s\n", err, before.Diff(after))
			code = 1
		}
		// Nor does building the releases leave anything on disk but the cache of cut releases.
		localcluster.CloseReleases()
		for _, rel := range releases.Record {
			dir := releases.Images[rel.Version].PinnedBundle
			if _, err := os.Stat(dir); !rel.Cut() && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(os.Stderr, "FAIL: the bundle of release %s was left in %s: %v\n", rel.Version, dir, err)
				code = 1
			}
		}
		if code == 0 {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "logs of every component are kept in", dir)
		}
	}()
	if err := cluster.PublishCatalog(ctx, releases, headVersion()); err != nil {
		fmt.Fprintln(os.Stderr, "publishing the catalog:", err)
		return code
	}
	if err := subscribe(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return code
	}
	code = m.Run()
	return code
}

// subscribe subscribes to the stable channel and waits until OLM has installed its head and
// the manager runs as OLM's Deployment describes it.
func subscribe(ctx context.Context) error {
	if err := cluster.Subscribe(ctx, localcluster.Subscription{}); err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	csv := headCSV()
	if _, err := cluster.WaitForCSV(ctx, csv, 5*time.Minute); err != nil {
		return err
	}
	if _, err := cluster.WaitForManager(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	if err := cluster.WaitForInstallPlan(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	return cluster.WaitForCRD(ctx)
}

func headVersion() string { return releases.Head().Version }

func headCSV() string { return releases.Head().CSVName() }

// manager is the manager that runs now.
func manager(t *testing.T) *localcluster.Manager {
	t.Helper()
	m, err := cluster.WaitForManager(context.Background(), headCSV(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
