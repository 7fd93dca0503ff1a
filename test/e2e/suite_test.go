// Package e2e installs App Operator from the project's catalog with the real OLM on a local
// control plane (see package framework) and checks what a user sees. One file per feature.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mycompany/app-operator/test/localcluster"
)

var (
	root    = localcluster.RepoRoot()
	cluster *localcluster.Cluster
	// kubelet runs the manager of whichever release OLM deploys; this suite tests the
	// checkout's manager, bin/manager, under the catalog's newest release.
	kubelet *localcluster.Kubelet
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.Main(m, "e2e", run))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir := filepath.Join(root, ".cache", "e2e", time.Now().Format("20060102-150405"))
	var err error
	cluster, err = localcluster.StartWithOLM(ctx, localcluster.Options{Name: "app-e2e", Dir: dir, Bin: filepath.Join(root, "bin")}, root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	code := 1
	defer func() {
		if kubelet != nil {
			kubelet.Stop()
		}
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
		if code == 0 {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "logs of every component are kept in", dir)
		}
	}()
	if err := install(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return code
	}
	code = m.Run()
	return code
}

// install serves the catalog and installs App Operator from it.
func install(ctx context.Context) error {
	if err := cluster.ServeCatalog(ctx, filepath.Join(root, "catalog")); err != nil {
		return fmt.Errorf("serving the catalog: %w", err)
	}
	manager := filepath.Join(root, "bin", "manager")
	kubelet = cluster.RunKubelet(func(context.Context, string) (string, error) { return manager, nil })
	return subscribe(ctx)
}

// subscribe subscribes to the stable channel, waits for OLM to install its head and runs the
// manager as OLM's Deployment describes it.
func subscribe(ctx context.Context) error {
	if err := cluster.Subscribe(ctx, localcluster.Subscription{}); err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	csv := headCSV()
	if _, err := cluster.WaitForCSV(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	if _, err := kubelet.WaitFor(ctx, csv, 2*time.Minute); err != nil {
		return err
	}
	if err := cluster.WaitForInstallPlan(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	return cluster.WaitForConversionWebhook(ctx)
}

func headCSV() string {
	head, err := localcluster.ChannelHead(filepath.Join(root, "catalog"))
	if err != nil {
		panic(err)
	}
	return head
}
