// Package publish builds what App Operator publishes for its releases: each release's images,
// built from the commit it was cut from (the release being prepared, from the checkout), its
// bundle image, whose ClusterServiceVersion names the manager by digest, and the file-based
// catalog, which names every bundle by digest. A release's images are the same wherever and
// whenever they are built from its commit, so the catalog's digests can be checked by
// building again.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/image"
)

// Publisher builds the releases of a checkout.
type Publisher struct {
	image.Builder
	// Dir is the checkout's root; its git history holds the commits of the cut releases.
	Dir string
	// TagBase is the manager's repository, such as quay.io/mycompany/app-operator; every other
	// image is named after it (-bundle, -catalog, -scorecard, -sample).
	TagBase string
	// CacheDir, when set, keeps the images of cut releases once built (see Build).
	CacheDir string
}

// Images are the images of one release.
type Images struct {
	Release release.Release
	// Manager is the manager image; Bundle the bundle image, of PinnedBundle.
	Manager, Bundle image.Built
	// PinnedBundle is the release's bundle directory with the manager named by digest: what
	// the bundle image holds. It is removed by Close.
	PinnedBundle string
	// Source is what the images were built from. Its Dir, the source tree, is empty for images
	// read from the cache, which keeps no source: Publisher.Source checks it out again.
	Source  image.Source
	cleanup func()
}

// Close removes what building the images left on disk.
func (i *Images) Close() {
	if i.cleanup != nil {
		i.cleanup()
	}
}

// SampleTag is the tag of the sample workload's image, which config/samples runs. The sample is
// versioned on its own, not with App Operator: a change to cmd/sample-workload changes it.
const SampleTag = "v1.0.0"

// Tag is the tag of a version's images.
func Tag(version string) string { return "v" + version }

// Repo is the repository of one of the release's images: the TagBase with a suffix such as
// "-bundle".
func (p *Publisher) Repo(suffix string) string { return p.TagBase + suffix }

// Build builds a release's manager and bundle images: a cut release from its commit, checked
// out in a git worktree, with the Go toolchain it records; the release being prepared from the
// checkout as it is. With a CacheDir, a cut release built once with the same toolchain,
// platforms and image builder is read back instead of built again; one built now is read back
// from the cache too, so that nothing of its build is left on disk.
func (p *Publisher) Build(ctx context.Context, r release.Release) (*Images, error) {
	if !r.Cut() || p.CacheDir == "" {
		return p.build(ctx, r)
	}
	key, err := p.cacheKey(r)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.CacheDir, r.Version+"-"+key)
	if imgs, err := readCached(dir, r); err == nil {
		return imgs, nil
	}
	imgs, err := p.build(ctx, r)
	if err != nil {
		return nil, err
	}
	err = writeCached(dir, imgs)
	// Either way the worktree and the temporary bundle go now: a process that keeps the
	// images until it ends (the suites, make demo) would otherwise leave them behind.
	imgs.Close()
	if err != nil {
		return nil, err
	}
	return readCached(dir, r)
}

func (p *Publisher) build(ctx context.Context, r release.Release) (*Images, error) {
	src := image.Source{Dir: p.Dir, Version: r.Version}
	var cleanup []func()
	done := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	commit := r.Commit
	if !r.Cut() {
		commit = "HEAD"
	} else {
		tree, err := p.worktree(ctx, r)
		if err != nil {
			return nil, err
		}
		cleanup = append(cleanup, func() { p.removeWorktree(tree) })
		src.Dir = tree
	}
	var err error
	if src.Revision, src.Created, err = p.commit(ctx, commit); err != nil {
		done()
		return nil, err
	}
	b := p.Builder
	if r.Go != "" {
		b.Toolchain = image.Toolchain(r.Go)
	}
	imgs, err := p.images(ctx, b, r, src)
	if err != nil {
		done()
		return nil, err
	}
	cleanup = append(cleanup, func() { os.RemoveAll(filepath.Dir(imgs.PinnedBundle)) })
	imgs.cleanup = done
	return imgs, nil
}

func (p *Publisher) images(ctx context.Context, b image.Builder, r release.Release, src image.Source) (*Images, error) {
	bundleDir := filepath.Join(src.Dir, "bundle")
	managerRef, err := image.ManagerImage(bundleDir)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", r.Version, err)
	}
	managerIdx, err := b.Manager(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", r.Version, err)
	}
	manager := image.Built{Repo: repoOf(managerRef), Tag: Tag(r.Version), Artifact: managerIdx}
	pinnedRef, err := manager.ByDigest()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "app-operator-bundle-")
	if err != nil {
		return nil, err
	}
	pinned := filepath.Join(tmp, "bundle")
	if err := image.PinDigests(bundleDir, pinned, map[string]string{managerRef: pinnedRef}); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("release %s: %w", r.Version, err)
	}
	bundleIdx, err := b.Bundle(pinned, src.Created)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("release %s: %w", r.Version, err)
	}
	return &Images{Release: r, Manager: manager, Bundle: image.Built{Repo: repoOf(managerRef) + "-bundle", Tag: Tag(r.Version), Artifact: bundleIdx},
		PinnedBundle: pinned, Source: src}, nil
}

// repoOf is the repository of an image reference: quay.io/x/y:tag is quay.io/x/y.
func repoOf(ref string) string {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// worktree checks a cut release's commit out in a temporary git worktree.
func (p *Publisher) worktree(ctx context.Context, r release.Release) (string, error) {
	if err := git(ctx, p.Dir, "cat-file", "-e", r.Commit+"^{commit}"); err != nil {
		return "", fmt.Errorf("release %s was cut from commit %s, which this clone does not have: fetch the full history (git fetch --unshallow)", r.Version, r.Commit)
	}
	tree, err := os.MkdirTemp("", "app-operator-"+r.Version+"-")
	if err != nil {
		return "", err
	}
	if err := git(ctx, p.Dir, "worktree", "add", "--detach", tree, r.Commit); err != nil {
		os.RemoveAll(tree)
		return "", err
	}
	return tree, nil
}

func (p *Publisher) removeWorktree(tree string) {
	_ = git(context.Background(), p.Dir, "worktree", "remove", "--force", tree)
	_ = os.RemoveAll(tree)
}

// commit returns the full id and the time of a commit.
func (p *Publisher) commit(ctx context.Context, rev string) (string, time.Time, error) {
	cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%H %ct", rev)
	cmd.Dir = p.Dir
	out, err := cmd.Output()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reading commit %s: %w", rev, err)
	}
	id, secs, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	unix, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reading the time of commit %s: %w", rev, err)
	}
	return id, time.Unix(unix, 0).UTC(), nil
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Candidate builds the other artifacts of a release from its source: the scorecard tests, the
// sample workload, and the Helm chart if it has one (see Chart).
func (p *Publisher) Candidate(ctx context.Context, imgs *Images) ([]image.Built, error) {
	src, done, err := p.Source(ctx, imgs)
	if err != nil {
		return nil, err
	}
	defer done()
	scorecard, err := p.Scorecard(ctx, src)
	if err != nil {
		return nil, err
	}
	sample, err := p.Sample(ctx, src)
	if err != nil {
		return nil, err
	}
	out := []image.Built{{Repo: p.Repo("-scorecard"), Tag: Tag(imgs.Release.Version), Artifact: scorecard},
		{Repo: p.Repo("-sample"), Tag: SampleTag, Artifact: sample}}
	chart, ok, err := p.Chart(src)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, chart)
	}
	return out, nil
}

// Source is the source tree a release's images were built from: their own while they are open
// or, for a cut release's images read from the cache, which keeps no source, its commit checked
// out again. done removes what Source checked out.
func (p *Publisher) Source(ctx context.Context, imgs *Images) (src image.Source, done func(), err error) {
	if imgs.Source.Dir != "" {
		return imgs.Source, func() {}, nil
	}
	tree, err := p.worktree(ctx, imgs.Release)
	if err != nil {
		return image.Source{}, nil, err
	}
	src = imgs.Source
	src.Dir = tree
	return src, func() { p.removeWorktree(tree) }, nil
}

// ChartDir is the Helm chart's folder in a checkout.
const ChartDir = "charts/app-operator"

// Chart is the Helm chart of a release's source, published as helm push publishes it:
// under charts/ beside the images (quay.io/mycompany/charts/app-operator for the TagBase
// quay.io/mycompany/app-operator), tagged with the chart's version, which must be the
// release's (make bundle sets it). It is false for a source without the chart's folder: the
// releases cut before the chart (0.1.0 to 0.4.0).
func (p *Publisher) Chart(src image.Source) (image.Built, bool, error) {
	dir := filepath.Join(src.Dir, ChartDir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return image.Built{}, false, nil
	}
	art, meta, err := image.Chart(dir, src.Created)
	if err != nil {
		return image.Built{}, false, err
	}
	if meta.Version != src.Version {
		return image.Built{}, false, fmt.Errorf("%s: version %s is not the release's, %s (make bundle sets it)",
			filepath.Join(dir, "Chart.yaml"), meta.Version, src.Version)
	}
	return image.Built{Repo: base(p.TagBase) + "/charts/" + meta.Name, Tag: ChartTag(meta.Version), Artifact: art}, true, nil
}

// ChartTag is the tag of a chart's version, as Helm names it: a tag may not hold the "+" of
// semver's build metadata, which Helm writes as "_".
func ChartTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// base is the directory of a repository: quay.io/x/y is quay.io/x.
func base(repo string) string { return path.Dir(repo) }

// ForCheckout is the Publisher of a checkout: its tools modules under hack/tools, its pinned
// Go toolchain (go.mod's toolchain line), the opm built into bin/, every platform of
// image.Platforms, and the images of cut releases kept under bin/images.
func ForCheckout(ctx context.Context, dir, tagBase string) (*Publisher, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "go.mod"), err)
	}
	var mod struct{ Toolchain string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, err
	}
	if mod.Toolchain == "" {
		return nil, fmt.Errorf("%s names no toolchain: the images are built with the toolchain it pins", filepath.Join(dir, "go.mod"))
	}
	return &Publisher{Dir: dir, TagBase: tagBase, CacheDir: filepath.Join(dir, "bin", "images"), Builder: image.Builder{Toolchain: image.Toolchain(mod.Toolchain),
		Platforms: image.Platforms, ToolsDir: filepath.Join(dir, "hack", "tools"), HostOPM: filepath.Join(dir, "bin", "opm"),
		Layers: &sync.Map{}}}, nil
}

// cacheKey names what a cut release's images depend on: its commit, its toolchain, the
// platforms, and the source of the image builder (this package and package image) and of
// go.sum, which pins go-containerregistry.
func (p *Publisher) cacheKey(r release.Release) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, r.Commit, r.Go)
	for _, pl := range p.Platforms {
		fmt.Fprintln(h, pl.OS, pl.Architecture)
	}
	files, err := filepath.Glob(filepath.Join(p.Dir, "internal", "release", "*", "*.go"))
	if err != nil {
		return "", err
	}
	for _, f := range append(files, filepath.Join(p.Dir, "go.sum")) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(h, filepath.Base(f), len(raw))
		h.Write(raw)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16], nil
}

// cachedSource records what the cached images were built from.
type cachedSource struct {
	Revision string    `json:"revision"`
	Created  time.Time `json:"created"`
}

func writeCached(dir string, imgs *Images) error {
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := image.WriteLayout(filepath.Join(tmp, "images"), []image.Built{imgs.Manager, imgs.Bundle}); err != nil {
		return err
	}
	if err := image.CopyTree(imgs.PinnedBundle, filepath.Join(tmp, "bundle")); err != nil {
		return err
	}
	raw, err := json.Marshal(cachedSource{Revision: imgs.Source.Revision, Created: imgs.Source.Created})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "source.json"), raw, 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

func readCached(dir string, r release.Release) (*Images, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "source.json"))
	if err != nil {
		return nil, err
	}
	var src cachedSource
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, err
	}
	built, err := image.ReadLayout(filepath.Join(dir, "images"))
	if err != nil || len(built) != 2 {
		return nil, fmt.Errorf("the cached images in %s are not whole: %w", dir, err)
	}
	return &Images{Release: r, Manager: built[0], Bundle: built[1], PinnedBundle: filepath.Join(dir, "bundle"),
		Source: image.Source{Version: r.Version, Revision: src.Revision, Created: src.Created}}, nil
}
