package localcluster

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/blang/semver/v4"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/mycompany/app-operator/internal/release"
	relcatalog "github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
)

// TagBase is the repository of App Operator's manager image; the catalog names every image of
// the project after it.
const TagBase = "quay.io/mycompany/app-operator"

// Releases are App Operator's releases as users pull them: the images of every cut release,
// built again from its commit (the catalog pins their digests), and of the release being
// prepared, built from the checkout.
type Releases struct {
	// Record is catalog/releases.yaml.
	Record release.Releases
	// Images are each release's manager and bundle images, by version.
	Images map[string]*publish.Images
	// Extra are the candidate's other artifacts: the scorecard tests, the sample workload and
	// the Helm chart.
	Extra []image.Built

	root          string
	publisher     *publish.Publisher
	candidateOnce sync.Once
	candidate     []byte
	candidateErr  error
	// catalogs are the catalog images built so far, by their catalog's content and tag.
	catalogs sync.Map
}

var (
	releasesOnce sync.Once
	releases     *Releases
	releasesErr  error
)

// BuildReleases builds the images of every release once per process.
func BuildReleases(ctx context.Context, root string) (*Releases, error) {
	releasesOnce.Do(func() { releases, releasesErr = buildReleases(ctx, root) })
	return releases, releasesErr
}

func buildReleases(ctx context.Context, root string) (*Releases, error) {
	record, err := release.Load(filepath.Join(root, "catalog"))
	if err != nil {
		return nil, err
	}
	p, err := publish.ForCheckout(ctx, root, TagBase)
	if err != nil {
		return nil, err
	}
	r := &Releases{Record: record, Images: map[string]*publish.Images{}, root: root, publisher: p}
	for _, rel := range record {
		imgs, err := p.Build(ctx, rel)
		if err != nil {
			r.close()
			return nil, err
		}
		r.Images[rel.Version] = imgs
		if !rel.Cut() {
			if r.Extra, err = p.Candidate(ctx, imgs); err != nil {
				r.close()
				return nil, err
			}
		}
	}
	return r, nil
}

// CloseReleases removes what building this process's releases left on disk: the bundle
// directory of the release being prepared, which no cache keeps. Main calls it once the suite
// has run, and every command that builds the releases once it is done with them.
func CloseReleases() {
	if releases != nil {
		releases.close()
	}
}

func (r *Releases) close() {
	for _, imgs := range r.Images {
		imgs.Close()
	}
}

// Head is the newest release: the one prepared, or the last cut.
func (r *Releases) Head() release.Release { return r.Record.Latest() }

// Versions are the releases, oldest first.
func (r *Releases) Versions() []string {
	var out []string
	for _, rel := range r.Record {
		out = append(out, rel.Version)
	}
	return out
}

// all are every release's images.
func (r *Releases) all() []image.Built {
	var out []image.Built
	for _, rel := range r.Record {
		out = append(out, r.Images[rel.Version].Manager, r.Images[rel.Version].Bundle)
	}
	return append(out, r.Extra...)
}

// CatalogUpTo writes into dir the catalog as it stood when release upTo was the newest
// published: the committed catalog's releases up to it, and the release being prepared if that
// is upTo.
func (r *Releases) CatalogUpTo(ctx context.Context, opm, upTo, dir string) error {
	limit, err := semver.Parse(upTo)
	if err != nil {
		return err
	}
	committed := filepath.Join(r.root, "catalog")
	var cut release.Releases
	for _, rel := range r.Record.Cut() {
		if semver.MustParse(rel.Version).LTE(limit) {
			cut = append(cut, rel)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, release.PackageName), 0o755); err != nil {
		return err
	}
	for _, rel := range cut {
		raw, err := os.ReadFile(filepath.Join(committed, release.PackageName, "bundles", rel.CSVName()+".yaml"))
		if err != nil {
			return fmt.Errorf("the catalog has no bundle of release %s: %w", rel.Version, err)
		}
		channels, def, err := relcatalog.ChannelsOf(r.Images[rel.Version].PinnedBundle)
		if err != nil {
			return err
		}
		if err := relcatalog.Add(dir, raw, channels, def, cut); err != nil {
			return err
		}
	}
	head := r.Head()
	if !head.Cut() && semver.MustParse(head.Version).LTE(limit) {
		rendered, err := r.renderedCandidate(ctx, opm)
		if err != nil {
			return err
		}
		channels, def, err := relcatalog.ChannelsOf(r.Images[head.Version].PinnedBundle)
		if err != nil {
			return err
		}
		if err := relcatalog.Add(dir, rendered, channels, def, r.Record); err != nil {
			return err
		}
	}
	return relcatalog.Validate(opm, dir)
}

// renderedCandidate renders the bundle image of the release being prepared, once.
func (r *Releases) renderedCandidate(ctx context.Context, opm string) ([]byte, error) {
	r.candidateOnce.Do(func() {
		r.candidate, r.candidateErr = publish.Render(ctx, opm, r.Images[r.Head().Version].Bundle)
	})
	return r.candidate, r.candidateErr
}

// CatalogImage builds the catalog image of a catalog directory for this machine's platform.
func (r *Releases) CatalogImage(ctx context.Context, dir, tag string) (image.Built, error) {
	key, err := treeHash(dir)
	if err != nil {
		return image.Built{}, err
	}
	key += "\x00" + tag
	if built, ok := r.catalogs.Load(key); ok {
		return built.(image.Built), nil
	}
	b := r.publisher.Builder
	b.Platforms = []v1.Platform{hostPlatform}
	idx, err := b.Catalog(ctx, r.Images[r.Head().Version].Source, dir)
	if err != nil {
		return image.Built{}, err
	}
	built := image.Built{Repo: r.publisher.Repo("-catalog"), Tag: tag, Artifact: idx}
	r.catalogs.Store(key, built)
	return built, nil
}

// BundleImage builds the bundle image of a bundle directory, tagged tag.
func (r *Releases) BundleImage(dir, tag string) (image.Built, error) {
	b := r.publisher.Builder
	idx, err := b.Bundle(dir, r.Images[r.Head().Version].Source.Created)
	if err != nil {
		return image.Built{}, err
	}
	return image.Built{Repo: r.publisher.Repo("-bundle"), Tag: tag, Artifact: idx}, nil
}

// treeHash is a hash of a directory's files, their paths and contents.
func treeHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(raw))
		h.Write(raw)
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil)), err
}
