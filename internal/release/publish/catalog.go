package publish

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/internal/release/image"
)

// UpdateCatalog writes the catalog of the cut releases into the catalog directory dir: each
// cut release built again from its commit and rendered from its bundle image, in the channels
// of its bundle. The catalog is written anew, so what it pinned before and what was built now
// can be compared: a cut release whose rendering changed is refused, naming both bundle
// images. (A release the catalog holds without an image, rendered from its bundle directory
// before it had images, is published as images once.) The catalog is validated with opm.
func (p *Publisher) UpdateCatalog(ctx context.Context, opm, dir string, releases release.Releases, progress func(string)) error {
	committed := filepath.Join(dir, release.PackageName, "bundles")
	fresh, err := os.MkdirTemp("", "app-operator-catalog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(fresh)
	for _, r := range releases.Cut() {
		progress(fmt.Sprintf("building release %s from commit %s", r.Version, r.Commit))
		rendered, channels, def, err := p.render(ctx, opm, r)
		if err != nil {
			return err
		}
		if err := unchanged(filepath.Join(committed, r.CSVName()+".yaml"), rendered, r); err != nil {
			return err
		}
		if err := catalog.Add(fresh, rendered, channels, def, releases); err != nil {
			return err
		}
	}
	if err := catalog.Validate(opm, fresh); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, release.PackageName)); err != nil {
		return err
	}
	return image.CopyTree(filepath.Join(fresh, release.PackageName), filepath.Join(dir, release.PackageName))
}

// unchanged refuses a cut release whose rendering differs from the committed one.
func unchanged(committedPath string, rendered []byte, r release.Release) error {
	old, err := os.ReadFile(committedPath)
	if os.IsNotExist(err) {
		return nil // cut since the catalog was last written
	}
	if err != nil {
		return err
	}
	if bytes.Contains(old, []byte("\nimage: \"\"\n")) {
		return nil // rendered from its bundle directory before it had images
	}
	return catalog.CutChanged(r, old, rendered)
}

// render builds a release's images and renders its bundle image.
func (p *Publisher) render(ctx context.Context, opm string, r release.Release) ([]byte, []string, string, error) {
	imgs, err := p.Build(ctx, r)
	if err != nil {
		return nil, nil, "", err
	}
	defer imgs.Close()
	rendered, err := Render(ctx, opm, imgs.Bundle)
	if err != nil {
		return nil, nil, "", err
	}
	channels, def, err := catalog.ChannelsOf(imgs.PinnedBundle)
	return rendered, channels, def, err
}

// WithCandidate writes to dst the catalog as it stands once the release being prepared is
// published: the catalog directory src and the candidate, rendered from its bundle image in
// the channels of its bundle.
func WithCandidate(ctx context.Context, opm, src, dst string, candidate *Images, releases release.Releases) error {
	if err := image.CopyTree(src, dst); err != nil {
		return err
	}
	rendered, err := Render(ctx, opm, candidate.Bundle)
	if err != nil {
		return err
	}
	channels, def, err := catalog.ChannelsOf(candidate.PinnedBundle)
	if err != nil {
		return err
	}
	if err := catalog.Add(dst, rendered, channels, def, releases); err != nil {
		return err
	}
	return catalog.Validate(opm, dst)
}

// CatalogImage builds the catalog image of a catalog directory, named after the candidate.
func (p *Publisher) CatalogImage(ctx context.Context, candidate *Images, dir string) (image.Built, error) {
	idx, err := p.Catalog(ctx, candidate.Source, dir)
	if err != nil {
		return image.Built{}, err
	}
	return image.Built{Repo: p.Repo("-catalog"), Tag: Tag(candidate.Release.Version), Artifact: idx}, nil
}
