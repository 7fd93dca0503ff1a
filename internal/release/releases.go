// Package release holds App Operator's release record, catalog/releases.yaml, and what it
// decides for every release: its ClusterServiceVersion's name, its createdAt date, the release
// it replaces and the versions it may skip. Subpackages turn a release into its OLM bundle
// (bundle) and add bundles to the file-based catalog (catalog).
package release

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// PackageName is App Operator's OLM package.
const PackageName = "app-operator"

// RecordFile is the name of the release record in the catalog directory. catalog/.indexignore
// keeps it out of what opm serves.
const RecordFile = "releases.yaml"

// Release is one release of App Operator, cut or being prepared.
type Release struct {
	// Version is the release's version, such as 0.1.0.
	Version string `json:"version"`
	// Date is the day the release is published (YYYY-MM-DD): its ClusterServiceVersion's
	// createdAt.
	Date string `json:"date"`
	// Commit is the source commit the release was cut from; empty while it is prepared.
	Commit string `json:"commit,omitempty"`
	// Go is the Go toolchain the release's images are built with, such as go1.26.8: building
	// them again with it gives the same digests. Empty while the release is prepared, which
	// builds with the toolchain of go.mod.
	Go string `json:"go,omitempty"`
	// SkipRange, when set, replaces the default olm.skipRange (every earlier release, see
	// Releases.Graph); "none" leaves it out.
	SkipRange string `json:"skipRange,omitempty"`
	// Deprecated, when set, marks the release deprecated in the catalog from a later release
	// on: OLM shows the message on every Subscription that installed it.
	Deprecated *Deprecation `json:"deprecated,omitempty"`
}

// Deprecation is a release's deprecation: the release that declares it, and why.
type Deprecation struct {
	// In is the version of the release from which the catalog marks this one deprecated.
	In string `json:"in"`
	// Message says why, and what to do instead.
	Message string `json:"message"`
}

// CSVName is the name of the release's ClusterServiceVersion.
func (r Release) CSVName() string { return CSVName(r.Version) }

// CSVName is the name of a version's ClusterServiceVersion.
func CSVName(version string) string { return PackageName + ".v" + version }

// Cut reports whether the release was cut: its commit is recorded, and its bundle never
// changes again.
func (r Release) Cut() bool { return r.Commit != "" }

// CreatedAt is the release's createdAt annotation: midnight UTC of its date.
func (r Release) CreatedAt() string { return r.Date + "T00:00:00Z" }

// Releases are the releases of the record, oldest first.
type Releases []Release

// Load reads and checks the release record of a catalog directory.
func Load(catalogDir string) (Releases, error) {
	raw, err := os.ReadFile(filepath.Join(catalogDir, RecordFile))
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// Parse reads a release record. Every release names a version and a date; versions rise from
// one release to the next; every commit is a full commit id; only the last release may be
// without a commit (it is being prepared). Each fault is reported with its field.
func Parse(raw []byte) (Releases, error) {
	var doc struct {
		Releases Releases `json:"releases"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordFile, err)
	}
	if len(doc.Releases) == 0 {
		return nil, fmt.Errorf("%s: releases: no release recorded", RecordFile)
	}
	var errs []error
	bad := func(i int, field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: releases[%d].%s: %s", RecordFile, i, field, fmt.Sprintf(format, args...)))
	}
	var previous *semver.Version
	for i, r := range doc.Releases {
		v, err := semver.Parse(r.Version)
		switch {
		case err != nil:
			bad(i, "version", "%v", err)
		case previous != nil && !v.GT(*previous):
			bad(i, "version", "%s must be newer than the release before it, %s", v, previous)
		}
		if err == nil {
			previous = &v
		}
		if _, err := time.Parse(time.DateOnly, r.Date); err != nil {
			bad(i, "date", "want YYYY-MM-DD, got %q", r.Date)
		}
		switch {
		case r.Commit == "" && i < len(doc.Releases)-1:
			bad(i, "commit", "only the last release may be uncut, and %s is followed by %s", r.Version, doc.Releases[i+1].Version)
		case r.Commit != "" && !isCommitID(r.Commit):
			bad(i, "commit", "want a full 40-character commit id, got %q", r.Commit)
		}
		switch {
		case r.Commit != "" && r.Go == "":
			bad(i, "go", "a cut release names the Go toolchain its images are built with, such as go1.26.8")
		case r.Go != "" && !goToolchain.MatchString(r.Go):
			bad(i, "go", "want a Go toolchain such as go1.26.8, got %q", r.Go)
		}
		for _, f := range catalogFaults(r, v, doc.Releases) {
			bad(i, f.field, "%s", f.fault)
		}
	}
	return doc.Releases, errors.Join(errs...)
}

// fault is what is wrong with a field of a release.
type fault struct{ field, fault string }

// catalogFaults are what is wrong with what a release says of its place in the catalog: its
// skipRange must parse, and its deprecation, if it has one, must be declared by a later
// release of the record, and say why.
func catalogFaults(r Release, v semver.Version, rs Releases) []fault {
	var faults []fault
	if r.SkipRange != "" && r.SkipRange != NoSkipRange {
		if _, err := semver.ParseRange(r.SkipRange); err != nil {
			faults = append(faults, fault{"skipRange", err.Error()})
		}
	}
	d := r.Deprecated
	if d == nil {
		return faults
	}
	in, err := semver.Parse(d.In)
	if _, found := rs.Find(d.In); err != nil || !found || !in.GT(v) {
		faults = append(faults, fault{"deprecated.in", fmt.Sprintf("want a later release of the record, got %q", d.In)})
	}
	if strings.TrimSpace(d.Message) == "" {
		faults = append(faults, fault{"deprecated.message", fmt.Sprintf("say why %s is deprecated and what to install instead", r.Version)})
	}
	return faults
}

// NoSkipRange is the SkipRange of a release that may be installed over its predecessor only.
const NoSkipRange = "none"

var goToolchain = regexp.MustCompile(`^go1\.\d+\.\d+$`)

func isCommitID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Find returns the release of a version.
func (rs Releases) Find(version string) (Release, bool) {
	for _, r := range rs {
		if r.Version == version {
			return r, true
		}
	}
	return Release{}, false
}

// Latest is the newest release: the one prepared, or the last cut.
func (rs Releases) Latest() Release { return rs[len(rs)-1] }

// Cut are the releases that were cut, oldest first.
func (rs Releases) Cut() Releases {
	var out Releases
	for _, r := range rs {
		if r.Cut() {
			out = append(out, r)
		}
	}
	return out
}

// Graph returns where a release sits in the upgrade graph: the ClusterServiceVersion it
// replaces (the release before it) and its olm.skipRange. By default a release may be
// installed directly over every earlier one (">=first <version>"); the record's skipRange
// narrows that, or removes it ("none").
func (rs Releases) Graph(version string) (replaces, skipRange string, err error) {
	for i, r := range rs {
		if r.Version != version {
			continue
		}
		if i == 0 {
			return "", "", nil
		}
		replaces = rs[i-1].CSVName()
		switch r.SkipRange {
		case "":
			skipRange = fmt.Sprintf(">=%s <%s", rs[0].Version, r.Version)
		case NoSkipRange:
		default:
			skipRange = r.SkipRange
		}
		return replaces, skipRange, nil
	}
	return "", "", fmt.Errorf("version %s is not in %s: add it as the release being prepared", version, RecordFile)
}

// Next is the release OLM upgrades an installed one to: the newest that replaces it or whose
// skipRange holds it; empty when there is none.
func (rs Releases) Next(installed string) (string, error) {
	v, err := semver.Parse(installed)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", installed, err)
	}
	newest := ""
	for _, r := range rs {
		replaces, skipRange, err := rs.Graph(r.Version)
		if err != nil {
			return "", err
		}
		skips := skipRange != "" && semver.MustParseRange(skipRange)(v)
		if replaces == CSVName(installed) || skips {
			newest = r.Version
		}
	}
	return newest, nil
}

// Path is every release OLM installs, one upgrade after another, from an installed release to
// the newest, both included.
func (rs Releases) Path(from string) ([]string, error) {
	path := []string{from}
	for at, head := from, rs.Latest().Version; at != head; {
		to, err := rs.Next(at)
		if err != nil {
			return nil, err
		}
		if to == "" {
			return nil, fmt.Errorf("nothing upgrades %s (path %v)", at, path)
		}
		path, at = append(path, to), to
	}
	return path, nil
}
