package localcluster

import (
	"context"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
)

// PublishCatalog publishes App Operator's catalog as it stood when release upTo was the newest:
// it pushes the catalog (PushCatalog) and points the CatalogSource at the catalog image by
// digest. OLM serves it from its registry pod; publishing a later one is a catalog update.
func (c *Cluster) PublishCatalog(ctx context.Context, rel *Releases, upTo string) error {
	img, err := c.PushCatalog(ctx, rel, upTo)
	if err != nil {
		return err
	}
	return c.serve(ctx, img)
}

// PushCatalog pushes to the cluster's registry every release's images and the catalog image
// as it stood when release upTo was the newest, tagged v<upTo> as a release tags it, and
// returns the catalog image: what users pull, for a CatalogSource of their own to name.
func (c *Cluster) PushCatalog(ctx context.Context, rel *Releases, upTo string) (image.Built, error) {
	if err := c.PushImages(ctx, rel); err != nil {
		return image.Built{}, err
	}
	dir := filepath.Join(c.Dir, "catalog-"+upTo)
	if err := rel.CatalogUpTo(ctx, filepath.Join(c.Bin, "opm"), upTo, dir); err != nil {
		return image.Built{}, err
	}
	return c.pushCatalogDir(ctx, rel, dir, publish.Tag(upTo))
}

// PushImages pushes every release's images to the cluster's registry, where the node pulls
// them by the names users pull them by: what installs without OLM (Helm, kustomize) run. The
// candidate's Helm chart goes there too, as <registry>/mycompany/charts/app-operator.
func (c *Cluster) PushImages(ctx context.Context, rel *Releases) error {
	return c.Push(ctx, rel.all()...)
}

// ServeCatalogDir builds the catalog image of a catalog directory, tagged tag, pushes it and
// serves it.
func (c *Cluster) ServeCatalogDir(ctx context.Context, rel *Releases, dir, tag string) error {
	img, err := c.pushCatalogDir(ctx, rel, dir, tag)
	if err != nil {
		return err
	}
	return c.serve(ctx, img)
}

func (c *Cluster) pushCatalogDir(ctx context.Context, rel *Releases, dir, tag string) (image.Built, error) {
	img, err := rel.CatalogImage(ctx, dir, tag)
	if err != nil {
		return image.Built{}, err
	}
	return img, c.Push(ctx, img)
}

// serve points the CatalogSource at a pushed catalog image, by digest.
func (c *Cluster) serve(ctx context.Context, img image.Built) error {
	ref, err := img.ByDigest()
	if err != nil {
		return err
	}
	return c.ServeCatalogImage(ctx, ref)
}
