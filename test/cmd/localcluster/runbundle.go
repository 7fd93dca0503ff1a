package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/test/localcluster"
)

// runBundle installs one bundle directory the way `operator-sdk run bundle` installs a bundle
// image: it serves the bundle alone as a catalog, subscribes to it and waits for its
// ClusterServiceVersion to succeed. It starts a fresh local cluster.
func runBundle(ctx context.Context, root, dir, bin, bundle string) error {
	c, err := start(ctx, root, dir, bin)
	if err != nil {
		return err
	}
	one := filepath.Join(dir, "bundle-catalog")
	if err := os.MkdirAll(one, 0o755); err != nil {
		return err
	}
	step("rendering %s as a catalog of its own", bundle)
	if err := catalog.Add(filepath.Join(bin, "opm"), bundle, one); err != nil {
		return err
	}
	if err := c.ServeCatalog(ctx, one); err != nil {
		return err
	}
	head, err := localcluster.ChannelHead(one)
	if err != nil {
		return err
	}
	if err := install(ctx, c, root, bin, head); err != nil {
		return err
	}
	fmt.Printf("\n%s is installed and running. export KUBECONFIG=%s\nStop everything with: make demo-down\n", head, c.Kubeconfig)
	return nil
}
