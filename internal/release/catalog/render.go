// Package catalog keeps App Operator's file-based catalog (catalog/): for each release the
// olm.bundle that opm renders from its bundle image, one file per channel with the releases
// published in it, and the package with its default channel. The catalog's releases.yaml (package
// release) records the commit each release was cut from: a cut release's bundle never changes.
package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release"
)

// Add adds a bundle, as opm rendered it, to the catalog directory: the rendered olm.bundle, an
// entry in each of its channels (and in no other), and, when it is the newest release, the
// package's default channel, description and icon from it. A cut release's bundle never
// changes: adding a different one under its version is refused, naming the bundle images.
func Add(dir string, rendered []byte, channels []string, defaultChannel string, releases release.Releases) error {
	return addRendered(dir, rendered, annotations{channels: channels, defaultChannel: defaultChannel}, releases)
}

// Validate checks a catalog directory with opm.
func Validate(opm, dir string) error {
	if out, err := exec.Command(opm, "validate", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("opm validate %s: %w\n%s", dir, err, out)
	}
	return nil
}

// ChannelsOf reads the channels a bundle directory's metadata/annotations.yaml publishes it in,
// and the package's default channel.
func ChannelsOf(bundleDir string) (channels []string, defaultChannel string, err error) {
	a, err := readAnnotations(bundleDir)
	return a.channels, a.defaultChannel, err
}

// Load reads the catalog directory's release record; a catalog without one, such as one
// bundle's, has no cut release.
func Load(dir string) (release.Releases, error) {
	releases, err := release.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return releases, err
}

// addRendered adds a rendered bundle, published in the channels of its annotations, to the
// catalog directory.
func addRendered(dir string, rendered []byte, meta annotations, releases release.Releases) error {
	b, err := csvOf(rendered)
	if err != nil {
		return err
	}
	b.Channels, b.DefaultChannel = meta.channels, meta.defaultChannel
	path := filepath.Join(dir, release.PackageName, "bundles", b.Name+".yaml")
	if r, ok := releases.Find(b.Version); ok && r.Cut() {
		if old, err := os.ReadFile(path); err == nil {
			if err := CutChanged(r, old, rendered); err != nil {
				return err
			}
		}
	}
	idx, err := loadIndex(filepath.Join(dir, release.PackageName))
	if err != nil {
		return err
	}
	idx.add(b)
	idx.deprecate(releases)
	if err := write(path, rendered); err != nil {
		return err
	}
	return idx.write(filepath.Join(dir, release.PackageName))
}

// CutChanged refuses a new rendering of a cut release's bundle that differs from the one
// published, naming both bundle images.
func CutChanged(r release.Release, published, rendered []byte) error {
	if bytes.Equal(published, rendered) {
		return nil
	}
	return fmt.Errorf("release %s was cut from commit %s and its bundle cannot change: the catalog names %s, but its bundle rebuilt from that commit is %s (was the toolchain, the image builder or a pinned module changed?)",
		r.Version, r.Commit, bundleImage(published), bundleImage(rendered))
}

// bundleImage is the image a rendered olm.bundle names.
func bundleImage(rendered []byte) string {
	var b struct {
		Image string `json:"image"`
	}
	if err := yaml.Unmarshal(rendered, &b); err != nil || b.Image == "" {
		return "a bundle without an image"
	}
	return b.Image
}

// annotations is what the catalog needs of a bundle's metadata/annotations.yaml.
type annotations struct {
	channels       []string
	defaultChannel string
}

func readAnnotations(bundleDir string) (annotations, error) {
	path := filepath.Join(bundleDir, "metadata", "annotations.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return annotations{}, err
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return annotations{}, fmt.Errorf("%s: %w", path, err)
	}
	a := annotations{defaultChannel: doc.Annotations[channelDefaultLabel]}
	for _, c := range strings.Split(doc.Annotations[channelsLabel], ",") {
		if c = strings.TrimSpace(c); c != "" {
			a.channels = append(a.channels, c)
		}
	}
	if len(a.channels) == 0 {
		return a, fmt.Errorf("%s: %s names no channel", path, channelsLabel)
	}
	if a.defaultChannel == "" {
		a.defaultChannel = a.channels[0]
	}
	return a, nil
}

// The annotations of a bundle that name its channels.
const (
	channelsLabel       = "operators.operatorframework.io.bundle.channels.v1"
	channelDefaultLabel = "operators.operatorframework.io.bundle.channel.default.v1"
)

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
