package image

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The catalog image serves its file-based catalog from ConfigsDir with the cache prebuilt in
// CacheDir, as operator-registry's catalog.Dockerfile convention lays it out.
const (
	ConfigsDir = "configs"
	CacheDir   = "tmp/cache"
	// ConfigsLabel tells OLM and opm where the catalog's configs are.
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
)

// Catalog is the catalog image of a file-based catalog directory: the opm image, the catalog
// under /configs, and opm's serve cache under /tmp/cache, built here so that the registry pod
// serves at once. The cache is opm's JSON cache, whose files (unlike its default database)
// are the same for the same catalog; opm checks it against the catalog when it starts.
func (b Builder) Catalog(ctx context.Context, s Source, catalogDir string) (v1.ImageIndex, error) {
	configs, err := readTree(catalogDir, ConfigsDir)
	if err != nil {
		return nil, err
	}
	cache, err := b.serveCache(ctx, configs)
	if err != nil {
		return nil, err
	}
	catalogLayer, err := Layer(s.Created, append(configs, cache...), Dir{Path: "tmp", Mode: os.ModeSticky | 0o777})
	if err != nil {
		return nil, err
	}
	labels := s.labels("App Operator catalog", "The file-based catalog of App Operator's releases, served by opm.")
	labels[ConfigsLabel] = "/" + ConfigsDir
	cfg := opmConfig(labels)
	cfg.Cmd = []string{"serve", "/" + ConfigsDir, "--cache-dir=/" + CacheDir}
	var images []v1.Image
	for _, p := range b.Platforms {
		base, err := b.opmLayer(ctx, p, s.Created)
		if err != nil {
			return nil, err
		}
		img, err := Assemble(p, s.Created, cfg, base, catalogLayer)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return IndexOf(b.Platforms, images)
}

// serveCache lays the catalog's files out as the image holds them, has opm build its JSON
// serve cache for them, and returns the cache's files, owned by the user that serves them.
func (b Builder) serveCache(ctx context.Context, configs []File) ([]File, error) {
	stage, err := os.MkdirTemp("", "app-operator-catalog-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	for _, f := range configs {
		path := filepath.Join(stage, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, f.Data, f.Mode); err != nil {
			return nil, err
		}
		if err := os.Chmod(path, f.Mode); err != nil { // the umask must not change what opm hashes
			return nil, err
		}
	}
	// Directories as the image holds them, whatever this process's umask.
	if err := filepath.WalkDir(stage, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chmod(path, 0o755)
	}); err != nil {
		return nil, err
	}
	// An empty cache/ and digest choose opm's JSON cache over its default database.
	cacheDir := filepath.Join(stage, filepath.FromSlash(CacheDir))
	if err := os.MkdirAll(filepath.Join(cacheDir, "cache"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cacheDir, "digest"), nil, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, b.HostOPM, "serve", filepath.Join(stage, ConfigsDir), "--cache-dir="+cacheDir, "--cache-only",
		"--pprof-addr=", "-t", filepath.Join(stage, "termination-log"))
	cmd.Env = append(os.Environ(), "TMPDIR="+stage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("opm serve --cache-only: %w\n%s", err, out)
	}
	var files []File
	err = filepath.WalkDir(cacheDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(stage, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Mode: info.Mode().Perm(), UID: OPMUID, GID: OPMUID, Data: data})
		return nil
	})
	return files, err
}
