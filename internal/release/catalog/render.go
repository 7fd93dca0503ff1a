// Package catalog keeps App Operator's file-based catalog (catalog/): for each release the
// olm.bundle that opm renders from its bundle, one file per channel with the releases published
// in it, and the package with its default channel. The catalog's releases.yaml (package
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

// Add renders a bundle directory with opm and adds it to the catalog directory: the rendered
// bundle, an entry in each channel its metadata/annotations.yaml names (and in no other), and,
// when it is the newest release, the package's default channel, description and icon from it.
// Rendering a different bundle under the version of a cut release is refused. The catalog is
// validated with opm.
func Add(opm, bundleDir, dir string) error {
	releases, err := release.Load(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a catalog without a release record, such as one bundle's, has no cut release
	}
	meta, err := readAnnotations(bundleDir)
	if err != nil {
		return err
	}
	rendered, err := exec.Command(opm, "render", bundleDir, "-o", "yaml").Output()
	if err != nil {
		return fmt.Errorf("opm render %s: %w", bundleDir, stderrOf(err))
	}
	if err := addRendered(dir, rendered, meta, releases); err != nil {
		return err
	}
	if out, err := exec.Command(opm, "validate", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("opm validate %s: %v\n%s", dir, err, out)
	}
	return nil
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
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, rendered) {
			return fmt.Errorf("release %s was cut from commit %s and its bundle cannot change; prepare the next release in %s", r.Version, r.Commit, release.RecordFile)
		}
	}
	idx, err := loadIndex(filepath.Join(dir, release.PackageName))
	if err != nil {
		return err
	}
	idx.add(b)
	if err := write(path, rendered); err != nil {
		return err
	}
	return idx.write(filepath.Join(dir, release.PackageName))
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

func stderrOf(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
