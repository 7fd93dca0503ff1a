package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release"
)

// entry is what the package and its channels need of a bundle.
type entry struct {
	Name, Version, Replaces, SkipRange, Description string
	Icon                                            map[string]string
	// Channels are the channels the bundle is published in; DefaultChannel is the package's
	// default channel when the bundle is the newest.
	Channels       []string
	DefaultChannel string
}

// csvOf reads the entry of a rendered olm.bundle from its ClusterServiceVersion.
func csvOf(rendered []byte) (entry, error) {
	var b struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := yaml.Unmarshal(rendered, &b); err != nil {
		return entry{}, err
	}
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			continue
		}
		var obj struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return entry{}, err
		}
		raw, err := base64.StdEncoding.DecodeString(obj.Data)
		if err != nil {
			return entry{}, err
		}
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Version  string              `json:"version"`
				Replaces string              `json:"replaces"`
				Icon     []map[string]string `json:"icon"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return entry{}, err
		}
		if o.Kind != "ClusterServiceVersion" {
			continue
		}
		if _, err := semver.Parse(o.Spec.Version); err != nil {
			return entry{}, fmt.Errorf("ClusterServiceVersion %s: spec.version: %w", o.Metadata.Name, err)
		}
		e := entry{Name: o.Metadata.Name, Version: o.Spec.Version, Replaces: o.Spec.Replaces,
			SkipRange: o.Metadata.Annotations["olm.skipRange"], Description: o.Metadata.Annotations["description"]}
		if len(o.Spec.Icon) > 0 {
			e.Icon = o.Spec.Icon[0]
		}
		return e, nil
	}
	return entry{}, fmt.Errorf("the rendered bundle holds no ClusterServiceVersion")
}

// index is the package, its channels and its deprecations.
type index struct {
	bundles        map[string]entry
	defaultChannel string
	// deprecations are the messages of the deprecated bundles, by name.
	deprecations map[string]string
}

// deprecationsFile holds the package's olm.deprecations, when it has any.
const deprecationsFile = "deprecations.yaml"

// deprecationsDoc is what the index reads of an olm.deprecations blob of bundles.
type deprecationsDoc struct {
	Entries []struct {
		Reference struct {
			Schema string `json:"schema"`
			Name   string `json:"name"`
		} `json:"reference"`
		Message string `json:"message"`
	} `json:"entries"`
}

// loadIndex reads the bundles of a package directory, the channels each is in, and the
// deprecated ones.
func loadIndex(dir string) (*index, error) {
	idx := &index{bundles: map[string]entry{}, deprecations: map[string]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "bundles", "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		e, err := csvOf(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		idx.bundles[e.Name] = e
	}
	channels, err := filepath.Glob(filepath.Join(dir, "channels", "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range channels {
		var ch struct {
			Name    string `json:"name"`
			Entries []struct {
				Name string `json:"name"`
			} `json:"entries"`
		}
		if err := readYAML(f, &ch); err != nil {
			return nil, err
		}
		for _, e := range ch.Entries {
			b, ok := idx.bundles[e.Name]
			if !ok {
				return nil, fmt.Errorf("%s: entry %s has no bundle in %s", f, e.Name, filepath.Join(dir, "bundles"))
			}
			b.Channels = append(b.Channels, ch.Name)
			idx.bundles[e.Name] = b
		}
	}
	var pkg struct {
		DefaultChannel string `json:"defaultChannel"`
	}
	if err := readYAML(filepath.Join(dir, "package.yaml"), &pkg); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	idx.defaultChannel = pkg.DefaultChannel
	var deprecations deprecationsDoc
	if err := readYAML(filepath.Join(dir, deprecationsFile), &deprecations); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range deprecations.Entries {
		idx.deprecations[e.Reference.Name] = e.Message
	}
	return idx, nil
}

// deprecate marks deprecated each release of the record that is in the index and whose
// deprecation was declared by a release in the index too: the catalog as it stood when that
// release was published.
func (idx *index) deprecate(releases release.Releases) {
	for _, r := range releases {
		if r.Deprecated == nil {
			continue
		}
		_, published := idx.bundles[r.CSVName()]
		_, declared := idx.bundles[release.CSVName(r.Deprecated.In)]
		if published && declared {
			idx.deprecations[r.CSVName()] = r.Deprecated.Message
		}
	}
}

// add puts a bundle into the index, in its channels only; the newest bundle sets the default
// channel.
func (idx *index) add(e entry) {
	idx.bundles[e.Name] = e
	if newest := idx.sorted(); newest[len(newest)-1].Name == e.Name {
		idx.defaultChannel = e.DefaultChannel
	}
}

// sorted returns the bundles, oldest first.
func (idx *index) sorted() []entry {
	out := make([]entry, 0, len(idx.bundles))
	for _, e := range idx.bundles {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return semver.MustParse(out[i].Version).LT(semver.MustParse(out[j].Version)) })
	return out
}

// write writes the package and one file per channel; each channel lists its releases oldest
// first, with the replaces and skipRange of their ClusterServiceVersions.
func (idx *index) write(dir string) error {
	bundles := idx.sorted()
	if len(bundles) == 0 {
		return fmt.Errorf("no bundle in %s", dir)
	}
	head := bundles[len(bundles)-1]
	pkg := map[string]any{"schema": "olm.package", "name": release.PackageName, "defaultChannel": idx.defaultChannel,
		"description": head.Description}
	if head.Icon != nil {
		pkg["icon"] = head.Icon
	}
	docs := map[string]any{filepath.Join(dir, "package.yaml"): pkg}
	channels := map[string][]map[string]any{}
	for _, b := range bundles {
		e := map[string]any{"name": b.Name}
		if b.Replaces != "" {
			e["replaces"] = b.Replaces
		}
		if b.SkipRange != "" {
			e["skipRange"] = b.SkipRange
		}
		for _, c := range b.Channels {
			channels[c] = append(channels[c], e)
		}
	}
	if _, ok := channels[idx.defaultChannel]; !ok {
		return fmt.Errorf("the default channel %q has no release", idx.defaultChannel)
	}
	old, err := filepath.Glob(filepath.Join(dir, "channels", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, ok := channels[strings.TrimSuffix(filepath.Base(f), ".yaml")]; !ok {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, entries := range channels {
		docs[filepath.Join(dir, "channels", name+".yaml")] = map[string]any{"schema": "olm.channel", "name": name,
			"package": release.PackageName, "entries": entries}
	}
	if deprecations := idx.deprecationsDoc(bundles); deprecations != nil {
		docs[filepath.Join(dir, deprecationsFile)] = deprecations
	}
	for _, path := range slices.Sorted(maps.Keys(docs)) {
		raw, err := yaml.Marshal(docs[path])
		if err != nil {
			return err
		}
		if err := write(path, raw); err != nil {
			return err
		}
	}
	return nil
}

// deprecationsDoc is the olm.deprecations blob of the deprecated bundles, oldest first; nil if
// none is.
func (idx *index) deprecationsDoc(bundles []entry) map[string]any {
	var entries []any
	for _, b := range bundles {
		if msg, ok := idx.deprecations[b.Name]; ok {
			entries = append(entries, map[string]any{"reference": map[string]any{"schema": "olm.bundle", "name": b.Name}, "message": msg})
		}
	}
	if entries == nil {
		return nil
	}
	return map[string]any{"schema": "olm.deprecations", "package": release.PackageName, "entries": entries}
}

func readYAML(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
