package image

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// SourceURL is where App Operator's source is published, for the images' labels.
const SourceURL = "https://github.com/mycompany/app-operator"

// Builder assembles the images of App Operator.
type Builder struct {
	// Toolchain builds every binary.
	Toolchain Toolchain
	// Platforms are the platforms of every image.
	Platforms []v1.Platform
	// ToolsDir holds the pinned tools modules (hack/tools): opm and grpc_health_probe come from
	// its olm module.
	ToolsDir string
	// HostOPM is an opm binary that runs on this machine, to build the catalog's serve cache.
	HostOPM string
	// Layers, when set, keeps the layers every catalog image shares (the opm image's, one per
	// platform) once built, for the Builders that share it: a process that builds a catalog
	// image for each release links opm and compresses its 70 MB once.
	Layers *sync.Map
}

// Source is the checkout a release is built from.
type Source struct {
	// Dir is the checkout's root.
	Dir string
	// Version is the release's version; Revision its commit.
	Version, Revision string
	// Created is the commit's time: the images' creation time and their files' times.
	Created time.Time
}

// labels are the OCI labels of the images built from a source.
func (s Source) labels(title, description string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.source":      SourceURL,
		"org.opencontainers.image.revision":    s.Revision,
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     s.Created.UTC().Format(time.RFC3339),
	}
}

// NonRootUID is the user App Operator's images run as.
const NonRootUID = 65532

// accounts are /etc/passwd and /etc/group naming root and one user, whose home is /: no shell.
func accounts(uid int, name string) []File {
	return []File{
		{Path: "etc/passwd", Data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/:/sbin/nologin\n", name, uid, uid, name))},
		{Path: "etc/group", Data: []byte(fmt.Sprintf("root:x:0:\n%s:x:%d:\n", name, uid))},
	}
}

// program builds a Go program for every platform, each into an image of its own with the
// binary at path, and returns their index.
func (b Builder) program(ctx context.Context, p Program, path string, created time.Time, cfg Config, extra ...File) (v1.ImageIndex, error) {
	var images []v1.Image
	for _, platform := range b.Platforms {
		bin, err := b.Toolchain.Compile(ctx, p, platform)
		if err != nil {
			return nil, err
		}
		files := append([]File{{Path: path, Mode: 0o755, Data: bin}}, extra...)
		layer, err := Layer(created, files)
		if err != nil {
			return nil, err
		}
		img, err := Assemble(platform, created, cfg, layer)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return IndexOf(b.Platforms, images)
}

// versionFlags stamp a source's version and commit into its commands (main.version and
// main.revision).
func (s Source) versionFlags() []string {
	return []string{"-X main.version=" + s.Version, "-X main.revision=" + s.Revision}
}

// Manager is the manager image: the static binary at /manager, run as the non-root user, no
// shell.
func (b Builder) Manager(ctx context.Context, s Source) (v1.ImageIndex, error) {
	return b.program(ctx, Program{ModuleDir: s.Dir, Package: "./cmd", LDFlags: s.versionFlags()}, "manager", s.Created,
		Config{User: fmt.Sprintf("%d:%d", NonRootUID, NonRootUID), Entrypoint: []string{"/manager"},
			Labels: s.labels("App Operator", "The App Operator manager: the App controller and webhooks.")},
		accounts(NonRootUID, "nonroot")...)
}

// Scorecard is the image of the custom scorecard tests, which bundle/tests/scorecard/config.yaml
// runs as app-scorecard <test>.
func (b Builder) Scorecard(ctx context.Context, s Source) (v1.ImageIndex, error) {
	return b.program(ctx, Program{ModuleDir: s.Dir, Package: "./scorecard", LDFlags: s.versionFlags()}, "usr/local/bin/app-scorecard", s.Created,
		Config{User: fmt.Sprintf("%d:%d", NonRootUID, NonRootUID), Entrypoint: []string{"app-scorecard"}, Env: []string{"PATH=/usr/local/bin"},
			Labels: s.labels("App Operator scorecard tests", "The custom scorecard tests of App Operator's bundle.")},
		accounts(NonRootUID, "nonroot")...)
}

// Sample is the sample workload that config/samples runs: a small web server on 8080.
func (b Builder) Sample(ctx context.Context, s Source) (v1.ImageIndex, error) {
	return b.program(ctx, Program{ModuleDir: s.Dir, Package: "./cmd/sample-workload"}, "sample-workload", s.Created,
		Config{User: fmt.Sprintf("%d:%d", NonRootUID, NonRootUID), Entrypoint: []string{"/sample-workload"}, Ports: []string{"8080/tcp"},
			Labels: s.labels("App Operator sample workload", "A small web server for App Operator's sample App.")},
		accounts(NonRootUID, "nonroot")...)
}

// Bundle is the bundle image of a bundle directory: manifests/, metadata/ and tests/scorecard/,
// labelled exactly as metadata/annotations.yaml (and bundle.Dockerfile) say.
func (b Builder) Bundle(dir string, created time.Time) (v1.ImageIndex, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "metadata", "annotations.yaml"), err)
	}
	var files []File
	for _, sub := range []string{"manifests", "metadata", "tests/scorecard"} {
		f, err := readTree(filepath.Join(dir, sub), sub)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	layer, err := Layer(created, files)
	if err != nil {
		return nil, err
	}
	var images []v1.Image
	for _, p := range b.Platforms {
		img, err := Assemble(p, created, Config{Labels: meta.Annotations}, layer)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return IndexOf(b.Platforms, images)
}

// readTree reads the regular files under dir as files of an image under prefix, with mode 0644.
func readTree(dir, prefix string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only regular files go into an image", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(filepath.Join(prefix, rel)), Mode: 0o644, Data: data})
		return nil
	})
	return files, err
}

// OPMUID is the user that serves catalogs, as in operator-registry's own opm image.
const OPMUID = 1001

// olmTools is the module under ToolsDir that pins opm and grpc_health_probe.
func (b Builder) olmTools() string { return filepath.Join(b.ToolsDir, "olm") }

// opmLayer is the opm image's layer for a platform, with its files' time: the one in Layers, or
// built (and kept there).
func (b Builder) opmLayer(ctx context.Context, p v1.Platform, created time.Time) (v1.Layer, error) {
	key := fmt.Sprint("opm ", b.Toolchain, " ", b.olmTools(), " ", p.String(), " ", created.UTC().Unix())
	if b.Layers != nil {
		if layer, ok := b.Layers.Load(key); ok {
			return layer.(v1.Layer), nil
		}
	}
	files, err := b.opmFiles(ctx, p)
	if err != nil {
		return nil, err
	}
	layer, err := Layer(created, files, Dir{Path: "tmp", Mode: os.ModeSticky | 0o777})
	if err != nil {
		return nil, err
	}
	if b.Layers != nil {
		actual, _ := b.Layers.LoadOrStore(key, layer)
		layer = actual.(v1.Layer)
	}
	return layer, nil
}

// opmFiles are the files of the opm image for a platform: opm, the grpc_health_probe that OLM's
// registry pods are probed with, nsswitch.conf, the opm user and a /tmp for its cache.
func (b Builder) opmFiles(ctx context.Context, p v1.Platform) ([]File, error) {
	opm, err := b.Toolchain.Compile(ctx, Program{ModuleDir: b.olmTools(), Package: "github.com/operator-framework/operator-registry/cmd/opm",
		Tags: []string{"json1", "containers_image_openpgp"}}, p)
	if err != nil {
		return nil, err
	}
	probe, err := b.Toolchain.Compile(ctx, Program{ModuleDir: b.olmTools(), Package: "github.com/grpc-ecosystem/grpc-health-probe"}, p)
	if err != nil {
		return nil, err
	}
	return append([]File{{Path: "bin/opm", Mode: 0o755, Data: opm}, {Path: "bin/grpc_health_probe", Mode: 0o755, Data: probe},
		{Path: "etc/nsswitch.conf", Data: []byte("hosts: files dns\n")}}, accounts(OPMUID, "opm")...), nil
}

// opmConfig runs opm as its user.
func opmConfig(labels map[string]string) Config {
	return Config{User: fmt.Sprint(OPMUID), Entrypoint: []string{"/bin/opm"}, Env: []string{"PATH=/bin"}, Labels: labels}
}

// moduleVersion is the version a tools module pins of a module.
func moduleVersion(ctx context.Context, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("reading the version of %s pinned in %s: %w", module, dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// OPM is the image that serves a catalog directory: opm and grpc_health_probe, as
// operator-registry's own opm image holds them.
func (b Builder) OPM(ctx context.Context, created time.Time) (v1.ImageIndex, error) {
	version, err := moduleVersion(ctx, b.olmTools(), "github.com/operator-framework/operator-registry")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"org.opencontainers.image.title": "opm",
		"org.opencontainers.image.version": version, "org.opencontainers.image.licenses": "Apache-2.0"}
	var images []v1.Image
	for _, p := range b.Platforms {
		layer, err := b.opmLayer(ctx, p, created)
		if err != nil {
			return nil, err
		}
		img, err := Assemble(p, created, opmConfig(labels), layer)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return IndexOf(b.Platforms, images)
}
