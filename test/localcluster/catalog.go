package localcluster

import (
	"context"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release/publish"
)

// PublishCatalog publishes App Operator's catalog as it stood when release upTo was the newest:
// it builds the catalog image of the releases up to upTo, pushes it and every release's images
// to the cluster's registry, and points the CatalogSource at the catalog image by digest. OLM
// serves it from its registry pod; publishing a later one is a catalog update.
func (c *Cluster) PublishCatalog(ctx context.Context, rel *Releases, upTo string) error {
	if err := c.Push(ctx, rel.all()...); err != nil {
		return err
	}
	dir := filepath.Join(c.Dir, "catalog-"+upTo)
	if err := rel.CatalogUpTo(ctx, filepath.Join(c.Bin, "opm"), upTo, dir); err != nil {
		return err
	}
	return c.ServeCatalogDir(ctx, rel, dir, publish.Tag(upTo))
}

// ServeCatalogDir builds the catalog image of a catalog directory, tagged tag, pushes it and
// serves it.
func (c *Cluster) ServeCatalogDir(ctx context.Context, rel *Releases, dir, tag string) error {
	img, err := rel.CatalogImage(ctx, dir, tag)
	if err != nil {
		return err
	}
	if err := c.Push(ctx, img); err != nil {
		return err
	}
	ref, err := img.ByDigest()
	if err != nil {
		return err
	}
	return c.ServeCatalogImage(ctx, ref)
}
