package catalog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/mycompany/app-operator/internal/release"
)

// rendered is an olm.bundle as opm renders it, holding a ClusterServiceVersion.
func rendered(t *testing.T, version, replaces, skipRange string) []byte {
	t.Helper()
	csv := map[string]any{"kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": "app-operator.v" + version,
			"annotations": map[string]any{"olm.skipRange": skipRange, "description": "App Operator " + version}},
		"spec": map[string]any{"version": version, "replaces": replaces,
			"icon": []any{map[string]any{"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"}}}}
	raw, err := json.Marshal(csv)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(version + replaces + skipRange))
	out, err := yaml.Marshal(map[string]any{"schema": "olm.bundle", "name": "app-operator.v" + version,
		"image":      fmt.Sprintf("quay.io/mycompany/app-operator-bundle@sha256:%x", sum),
		"properties": []any{map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(raw)}}}})
	require.NoError(t, err)
	return out
}

// publish adds a release to a catalog directory as Add does once opm rendered it.
func publish(t *testing.T, dir string, releases release.Releases, version, replaces, skipRange, defaultChannel string, channels ...string) error {
	t.Helper()
	return addRendered(dir, rendered(t, version, replaces, skipRange), annotations{channels: channels, defaultChannel: defaultChannel}, releases)
}

// catalogWith returns a catalog directory whose releases are in the stable channel.
func catalogWith(t *testing.T, versions ...string) string {
	t.Helper()
	dir := t.TempDir()
	previous := ""
	for _, v := range versions {
		require.NoError(t, publish(t, dir, nil, v, previous, "", "stable", "stable"))
		previous = "app-operator.v" + v
	}
	return dir
}

func pkgDir(dir string) string { return filepath.Join(dir, release.PackageName) }

type channelDoc struct {
	Name    string `json:"name"`
	Entries []struct {
		Name      string `json:"name"`
		Replaces  string `json:"replaces"`
		SkipRange string `json:"skipRange"`
	} `json:"entries"`
}

func readChannel(t *testing.T, dir, name string) channelDoc {
	t.Helper()
	var ch channelDoc
	require.NoError(t, readYAML(filepath.Join(pkgDir(dir), "channels", name+".yaml"), &ch))
	return ch
}

func entryNames(ch channelDoc) []string {
	var names []string
	for _, e := range ch.Entries {
		names = append(names, e.Name)
	}
	return names
}

func TestANewReleaseJoinsTheChannelsItNamesOnly(t *testing.T) {
	dir := catalogWith(t, "0.1.0", "0.2.0")
	require.NoError(t, publish(t, dir, nil, "0.3.0", "app-operator.v0.2.0", ">=0.1.0 <0.3.0", "stable", "fast", "stable"))

	stable := readChannel(t, dir, "stable")
	require.Equal(t, []string{"app-operator.v0.1.0", "app-operator.v0.2.0", "app-operator.v0.3.0"}, entryNames(stable))
	require.Equal(t, "app-operator.v0.2.0", stable.Entries[2].Replaces)
	require.Equal(t, ">=0.1.0 <0.3.0", stable.Entries[2].SkipRange)
	require.Equal(t, []string{"app-operator.v0.3.0"}, entryNames(readChannel(t, dir, "fast")), "older releases stay where they were")
	require.FileExists(t, filepath.Join(pkgDir(dir), "bundles", "app-operator.v0.3.0.yaml"))
}

func TestAReleaseLeavesAChannelItNoLongerNames(t *testing.T) {
	dir := catalogWith(t, "0.1.0")
	require.NoError(t, publish(t, dir, nil, "0.2.0", "app-operator.v0.1.0", "", "stable", "fast", "stable"))
	require.FileExists(t, filepath.Join(pkgDir(dir), "channels", "fast.yaml"))

	require.NoError(t, publish(t, dir, nil, "0.2.0", "app-operator.v0.1.0", "", "stable", "stable"))
	require.NoFileExists(t, filepath.Join(pkgDir(dir), "channels", "fast.yaml"), "a channel without releases is removed")
	require.Equal(t, []string{"app-operator.v0.1.0", "app-operator.v0.2.0"}, entryNames(readChannel(t, dir, "stable")))
}

func TestTheNewestReleaseSetsThePackage(t *testing.T) {
	dir := catalogWith(t, "0.1.0")
	require.NoError(t, publish(t, dir, nil, "0.2.0", "app-operator.v0.1.0", "", "fast", "fast"))
	var pkg struct {
		DefaultChannel string            `json:"defaultChannel"`
		Description    string            `json:"description"`
		Icon           map[string]string `json:"icon"`
	}
	require.NoError(t, readYAML(filepath.Join(pkgDir(dir), "package.yaml"), &pkg))
	require.Equal(t, "fast", pkg.DefaultChannel)
	require.Equal(t, "App Operator 0.2.0", pkg.Description)
	require.Equal(t, "image/svg+xml", pkg.Icon["mediatype"])

	// An older release added later does not change the package.
	require.NoError(t, publish(t, dir, nil, "0.0.9", "", "", "stable", "stable"))
	require.NoError(t, readYAML(filepath.Join(pkgDir(dir), "package.yaml"), &pkg))
	require.Equal(t, "fast", pkg.DefaultChannel)
	require.Equal(t, "App Operator 0.2.0", pkg.Description)
}

func TestADefaultChannelWithoutReleasesIsRefused(t *testing.T) {
	dir := catalogWith(t, "0.1.0")
	err := publish(t, dir, nil, "0.2.0", "app-operator.v0.1.0", "", "candidate", "fast")
	require.EqualError(t, err, `the default channel "candidate" has no release`)
}

func TestACutReleaseNeverChanges(t *testing.T) {
	dir := catalogWith(t, "0.1.0")
	cut := release.Releases{{Version: "0.1.0", Date: "2026-12-02", Commit: "629606fd2b3d3b9e5e74797db12b25400ba03e72"}}
	require.NoError(t, publish(t, dir, cut, "0.1.0", "", "", "stable", "stable"), "the same bundle again is no change")
	err := publish(t, dir, cut, "0.1.0", "", ">=0.0.1 <0.1.0", "stable", "stable")
	require.ErrorContains(t, err, "release 0.1.0 was cut from commit 629606fd2b3d3b9e5e74797db12b25400ba03e72 and its bundle cannot change: the catalog names quay.io/mycompany/app-operator-bundle@sha256:")
	require.ErrorContains(t, err, "but its bundle rebuilt from that commit is quay.io/mycompany/app-operator-bundle@sha256:")
	var ch channelDoc
	require.NoError(t, readYAML(filepath.Join(pkgDir(dir), "channels", "stable.yaml"), &ch))
	require.Empty(t, ch.Entries[0].SkipRange, "nothing was written")
}

func TestAChannelEntryWithoutItsBundleIsReported(t *testing.T) {
	dir := catalogWith(t, "0.1.0")
	require.NoError(t, os.Remove(filepath.Join(pkgDir(dir), "bundles", "app-operator.v0.1.0.yaml")))
	_, err := loadIndex(pkgDir(dir))
	require.ErrorContains(t, err, "entry app-operator.v0.1.0 has no bundle in")
}
func TestChannelsOfTheBundleComeFromItsAnnotations(t *testing.T) {
	dir := t.TempDir()
	write := func(annotations string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "metadata"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte("annotations:\n"+annotations), 0o644))
	}
	write(fmt.Sprintf("  %s: fast, stable\n  %s: stable\n", channelsLabel, channelDefaultLabel))
	a, err := readAnnotations(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"fast", "stable"}, a.channels)
	require.Equal(t, "stable", a.defaultChannel)

	write(fmt.Sprintf("  %s: \"\"\n", channelsLabel))
	_, err = readAnnotations(dir)
	require.ErrorContains(t, err, channelsLabel+" names no channel")
}

func TestADeprecationAppearsWithTheReleaseThatDeclaresIt(t *testing.T) {
	dir := t.TempDir()
	record := release.Releases{
		{Version: "0.1.0", Deprecated: &release.Deprecation{In: "0.3.0", Message: "0.1.0 stores v1alpha1; install 0.3.0"}},
		{Version: "0.2.0"},
		{Version: "0.3.0"},
	}
	deprecations := filepath.Join(pkgDir(dir), deprecationsFile)
	require.NoError(t, publish(t, dir, record, "0.1.0", "", "", "stable", "stable"))
	require.NoError(t, publish(t, dir, record, "0.2.0", "app-operator.v0.1.0", "", "stable", "stable"))
	require.NoFileExists(t, deprecations, "the catalog of 0.2.0 deprecates nothing")

	require.NoError(t, publish(t, dir, record, "0.3.0", "app-operator.v0.2.0", "", "stable", "stable"))
	want := "schema: olm.deprecations\npackage: app-operator\nentries:\n- message: 0.1.0 stores v1alpha1; install 0.3.0\n  reference:\n    name: app-operator.v0.1.0\n    schema: olm.bundle\n"
	got, err := os.ReadFile(deprecations)
	require.NoError(t, err)
	require.YAMLEq(t, want, string(got))

	// A bundle added without the record, as a test's throwaway release is, keeps them.
	require.NoError(t, publish(t, dir, nil, "0.4.0", "app-operator.v0.3.0", "", "stable", "stable"))
	got, err = os.ReadFile(deprecations)
	require.NoError(t, err)
	require.YAMLEq(t, want, string(got))
}
