// Package catalog writes and reads App Operator's file-based catalog (catalog/): the rendered
// bundle of each release, the package and its stable channel, and releases.yaml, which records
// the source commit each release was cut from.
package catalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// PackageName and ChannelName name App Operator's package and its channel.
const (
	PackageName = "app-operator"
	ChannelName = "stable"
)

// Render renders a bundle directory with opm into a catalog directory, then writes the package
// and its stable channel from every bundle there: each release replaces the one its
// ClusterServiceVersion names, and keeps its olm.skipRange. A release recorded in the
// catalog's releases.yaml is cut: its bundle never changes again, and rendering a different
// one under its version is refused. The catalog is validated with opm.
func Render(opm, bundleDir, dir string) error {
	releases, err := LoadReleases(dir)
	if err != nil {
		return err
	}
	pkgDir := filepath.Join(dir, PackageName)
	rendered, err := exec.Command(opm, "render", bundleDir, "-o", "yaml").Output()
	if err != nil {
		return fmt.Errorf("opm render %s: %w", bundleDir, stderrOf(err))
	}
	csv, err := csvOf(rendered)
	if err != nil {
		return err
	}
	path := filepath.Join(pkgDir, "bundles", csv.Name+".yaml")
	if r, cut := releases.Find(csv.Version); cut {
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, rendered) {
			return fmt.Errorf("release %s was cut from commit %s and its bundle cannot change; set VERSION to the next release", r.Version, r.Commit)
		}
	}
	if err := write(path, rendered); err != nil {
		return err
	}

	bundles, err := loadBundles(filepath.Join(pkgDir, "bundles"))
	if err != nil {
		return err
	}
	if err := writeIndex(pkgDir, bundles); err != nil {
		return err
	}
	if out, err := exec.Command(opm, "validate", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("opm validate %s: %v\n%s", dir, err, out)
	}
	return nil
}

// csv is what the catalog needs of a bundle's ClusterServiceVersion.
type csv struct {
	Name, Version, Replaces, SkipRange, Description string
	Icon                                            map[string]string
}

// csvOf finds the ClusterServiceVersion among the objects of a rendered olm.bundle.
func csvOf(rendered []byte) (csv, error) {
	var b struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := yaml.Unmarshal(rendered, &b); err != nil {
		return csv{}, err
	}
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			continue
		}
		var obj struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return csv{}, err
		}
		raw, err := base64.StdEncoding.DecodeString(obj.Data)
		if err != nil {
			return csv{}, err
		}
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Version     string              `json:"version"`
				Replaces    string              `json:"replaces"`
				Description string              `json:"description"`
				Icon        []map[string]string `json:"icon"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return csv{}, err
		}
		if o.Kind == "ClusterServiceVersion" {
			c := csv{Name: o.Metadata.Name, Version: o.Spec.Version, Replaces: o.Spec.Replaces,
				SkipRange: o.Metadata.Annotations["olm.skipRange"], Description: o.Metadata.Annotations["description"]}
			if len(o.Spec.Icon) > 0 {
				c.Icon = o.Spec.Icon[0]
			}
			return c, nil
		}
	}
	return csv{}, fmt.Errorf("the rendered bundle holds no ClusterServiceVersion")
}

func loadBundles(dir string) ([]csv, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []csv
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := csvOf(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return semver.MustParse(out[i].Version).LT(semver.MustParse(out[j].Version)) })
	return out, nil
}

// writeIndex writes the package and its channel; the newest release is the channel's head.
func writeIndex(dir string, bundles []csv) error {
	if len(bundles) == 0 {
		return fmt.Errorf("no bundle in %s", dir)
	}
	head := bundles[len(bundles)-1]
	pkg := map[string]any{"schema": "olm.package", "name": PackageName, "defaultChannel": ChannelName,
		"description": head.Description}
	if head.Icon != nil {
		pkg["icon"] = head.Icon
	}
	var entries []map[string]any
	for _, b := range bundles {
		e := map[string]any{"name": b.Name}
		if b.Replaces != "" {
			e["replaces"] = b.Replaces
		}
		if b.SkipRange != "" {
			e["skipRange"] = b.SkipRange
		}
		entries = append(entries, e)
	}
	channel := map[string]any{"schema": "olm.channel", "name": ChannelName, "package": PackageName, "entries": entries}
	for name, doc := range map[string]any{"package.yaml": pkg, "channel.yaml": channel} {
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		if err := write(filepath.Join(dir, name), raw); err != nil {
			return err
		}
	}
	return nil
}

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
