package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// FileName is the name of the release record in the catalog directory. catalog/.indexignore
// keeps it out of what opm serves.
const FileName = "releases.yaml"

// Release is one cut release.
type Release struct {
	// Version is the release's version, such as 0.1.0.
	Version string `json:"version"`
	// Commit is the source commit the release's bundle and manager were built from.
	Commit string `json:"commit"`
}

// CSVName is the name of the release's ClusterServiceVersion.
func (r Release) CSVName() string { return "app-operator.v" + r.Version }

// Releases are the cut releases, oldest first.
type Releases []Release

// LoadReleases reads the release record of a catalog directory; a catalog without one has no releases.
func LoadReleases(catalogDir string) (Releases, error) {
	raw, err := os.ReadFile(filepath.Join(catalogDir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Releases Releases `json:"releases"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", FileName, err)
	}
	for i, r := range doc.Releases {
		if _, err := semver.Parse(r.Version); err != nil {
			return nil, fmt.Errorf("%s: releases[%d].version: %w", FileName, i, err)
		}
		if len(r.Commit) != 40 {
			return nil, fmt.Errorf("%s: releases[%d].commit: want a full 40-character commit id, got %q", FileName, i, r.Commit)
		}
	}
	return doc.Releases, nil
}

// Find returns the cut release of a version.
func (rs Releases) Find(version string) (Release, bool) {
	for _, r := range rs {
		if r.Version == version {
			return r, true
		}
	}
	return Release{}, false
}
