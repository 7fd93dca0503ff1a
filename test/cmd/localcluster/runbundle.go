package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/internal/release/publish"
)

// runBundle installs one bundle image the way `operator-sdk run bundle` does: it serves a
// catalog of that bundle alone, subscribes to it and waits until its ClusterServiceVersion
// succeeds and its manager runs. It starts a fresh local cluster; the bundle image, by default
// the one of the release being prepared, is pushed to its registry first.
func runBundle(ctx context.Context, root, dir, bin, ref string) error {
	c, rel, err := start(ctx, root, dir, bin)
	if err != nil {
		return err
	}
	head := rel.Images[rel.Head().Version]
	bundle := head.Bundle
	if ref != "" && ref != bundle.Ref() {
		return fmt.Errorf("--bundle %s: this local cluster can install the bundle images it builds, such as %s", ref, bundle.Ref())
	}
	if err := c.Push(ctx, head.Manager, bundle); err != nil {
		return err
	}
	step("rendering %s as a catalog of its own", bundle.Ref())
	rendered, err := publish.Render(ctx, filepath.Join(bin, "opm"), bundle)
	if err != nil {
		return err
	}
	one := filepath.Join(dir, "bundle-catalog")
	channels, def, err := catalog.ChannelsOf(head.PinnedBundle)
	if err != nil {
		return err
	}
	if err := catalog.Add(one, rendered, channels, def, nil); err != nil {
		return err
	}
	if err := c.ServeCatalogDir(ctx, rel, one, "bundle-"+bundle.Tag); err != nil {
		return err
	}
	if err := install(ctx, c, head.Release.CSVName()); err != nil {
		return err
	}
	fmt.Printf("\n%s is installed and running. export KUBECONFIG=%s\nStop everything with: make demo-down\n", head.Release.CSVName(), c.Kubeconfig)
	return nil
}
