package release

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/require"
)

const (
	commitA = "629606fd2b3d3b9e5e74797db12b25400ba03e72"
	commitB = "1c5c194950ba7af993775b92b84868ab1af71694"
	commitC = "5f4a018f4de04747004314391a09e8db123041fa"
)

func TestParseRefusesEveryBadRecordNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name, record, want string
	}{
		{"no release", "releases: []", "releases: no release recorded"},
		{"unknown field", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  notes: x", `unknown field "notes"`},
		{"bad version", "releases:\n- version: one\n  date: \"2026-12-02\"", "releases[0].version:"},
		{"version not rising", "releases:\n- version: 0.2.0\n  date: \"2026-12-02\"\n  go: go1.26.8\n  commit: " + commitA +
			"\n- version: 0.1.0\n  date: \"2026-12-02\"", "releases[1].version: 0.1.0 must be newer than the release before it, 0.2.0"},
		{"bad date", "releases:\n- version: 0.1.0\n  date: 12/02/2026", `releases[0].date: want YYYY-MM-DD, got "12/02/2026"`},
		{"uncut before the last", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n- version: 0.2.0\n  date: \"2026-12-02\"",
			"releases[0].commit: only the last release may be uncut, and 0.1.0 is followed by 0.2.0"},
		{"short commit", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  commit: 629606f\n  go: go1.26.8", `releases[0].commit: want a full 40-character commit id, got "629606f"`},
		{"cut without a toolchain", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  commit: " + commitA, "releases[0].go: a cut release names the Go toolchain"},
		{"bad toolchain", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  commit: " + commitA + "\n  go: 1.26", `releases[0].go: want a Go toolchain such as go1.26.8, got "1.26"`},
		{"bad skipRange", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  skipRange: sometimes", "releases[0].skipRange:"},
		{"deprecated in an unknown release", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  deprecated: {in: 0.2.0, message: old}",
			`releases[0].deprecated.in: want a later release of the record, got "0.2.0"`},
		{"deprecated in itself", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  deprecated: {in: 0.1.0, message: old}",
			`releases[0].deprecated.in: want a later release of the record, got "0.1.0"`},
		{"deprecated without a message", "releases:\n- version: 0.1.0\n  date: \"2026-12-02\"\n  go: go1.26.8\n  commit: " + commitA +
			"\n  deprecated: {in: 0.2.0}\n- version: 0.2.0\n  date: \"2026-12-03\"", "releases[0].deprecated.message: say why 0.1.0 is deprecated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.record))
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), RecordFile+": "), "the error names the file: %v", err)
		})
	}
}

func TestParseReportsEveryFaultAtOnce(t *testing.T) {
	_, err := Parse([]byte("releases:\n- version: x\n  date: y\n  commit: z"))
	require.ErrorContains(t, err, "releases[0].version")
	require.ErrorContains(t, err, "releases[0].date")
	require.ErrorContains(t, err, "releases[0].commit")
}

func record() Releases {
	return Releases{
		{Version: "0.1.0", Date: "2026-12-02", Commit: commitA},
		{Version: "0.2.0", Date: "2026-12-02", Commit: commitB},
		{Version: "0.3.0", Date: "2026-12-03", Commit: commitC, SkipRange: ">=0.2.0 <0.3.0"},
		{Version: "0.4.0", Date: "2026-12-04", SkipRange: NoSkipRange},
		{Version: "0.5.0", Date: "2026-12-05"},
	}
}

func TestGraph(t *testing.T) {
	rs := record()
	for _, tc := range []struct {
		version, replaces, skipRange string
	}{
		{"0.1.0", "", ""}, // the first release replaces nothing
		{"0.2.0", "app-operator.v0.1.0", ">=0.1.0 <0.2.0"}, // by default: every earlier release
		{"0.3.0", "app-operator.v0.2.0", ">=0.2.0 <0.3.0"}, // the record narrows it
		{"0.4.0", "app-operator.v0.3.0", ""},               // "none": over its predecessor only
		{"0.5.0", "app-operator.v0.4.0", ">=0.1.0 <0.5.0"}, // the default again
	} {
		replaces, skipRange, err := rs.Graph(tc.version)
		require.NoError(t, err)
		require.Equal(t, tc.replaces, replaces, tc.version)
		require.Equal(t, tc.skipRange, skipRange, tc.version)
	}
	_, _, err := rs.Graph("0.9.0")
	require.EqualError(t, err, "version 0.9.0 is not in releases.yaml: add it as the release being prepared")
}

func TestReleaseValues(t *testing.T) {
	rs := record()
	require.Equal(t, "app-operator.v0.3.0", rs[2].CSVName())
	require.Equal(t, "2026-12-03T00:00:00Z", rs[2].CreatedAt())
	require.True(t, rs[2].Cut())
	require.False(t, rs.Latest().Cut())
	require.Equal(t, "0.5.0", rs.Latest().Version)
	require.Len(t, rs.Cut(), 3)
	r, ok := rs.Find("0.2.0")
	require.True(t, ok)
	require.Equal(t, commitB, r.Commit)
	_, ok = rs.Find("1.0.0")
	require.False(t, ok)
}

func TestTheCommittedRecordParses(t *testing.T) {
	rs, err := Load("../../catalog")
	require.NoError(t, err)
	require.NotEmpty(t, rs.Cut())
}

// Every release of the committed record reaches the newest by OLM's upgrades, each step to a
// newer release. (That each jump is one OLM can carry out, the CRD of its target converting
// what the release before stored, is tested on a cluster by test/upgrade.)
func TestEveryReleaseReachesTheNewest(t *testing.T) {
	rs, err := Load("../../catalog")
	require.NoError(t, err)
	for _, r := range rs[:len(rs)-1] {
		path, err := rs.Path(r.Version)
		require.NoError(t, err)
		for i := 1; i < len(path); i++ {
			require.True(t, semver.MustParse(path[i]).GT(semver.MustParse(path[i-1])), "%s upgrades to %s", path[i-1], path[i])
		}
		t.Logf("%s: %v", r.Version, path)
	}
}

// 0.1.0 stores Apps as v1alpha1, which 1.0.0's CRD no longer has: OLM would refuse the jump
// (the new CRD removes a stored version). Its path goes through a release that migrates them.
func TestTheFirstReleaseReachesOneWithoutV1alpha1OnlyThroughAMigration(t *testing.T) {
	rs, err := Load("../../catalog")
	require.NoError(t, err)
	withoutV1alpha1 := semver.MustParse("1.0.0")
	path, err := rs.Path(rs[0].Version)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(path), 2)
	require.True(t, semver.MustParse(path[1]).LT(withoutV1alpha1), "%s jumps straight to %s (path %v)", path[0], path[1], path)
}

func TestPathFollowsReplacesAndSkipRanges(t *testing.T) {
	rs := Releases{
		{Version: "0.1.0"}, {Version: "0.2.0", SkipRange: NoSkipRange}, {Version: "0.3.0"},
		{Version: "0.4.0", SkipRange: ">=0.2.0 <0.4.0"},
	}
	for from, want := range map[string][]string{
		"0.1.0": {"0.1.0", "0.3.0", "0.4.0"}, // 0.4.0's range leaves 0.1.0 out
		"0.2.0": {"0.2.0", "0.4.0"},
		"0.3.0": {"0.3.0", "0.4.0"},
		"0.4.0": {"0.4.0"},
	} {
		path, err := rs.Path(from)
		require.NoError(t, err)
		require.Equal(t, want, path, from)
	}
	_, err := Releases{{Version: "0.1.0"}, {Version: "0.2.0"}, {Version: "0.3.0", SkipRange: ">=0.2.0 <0.3.0"}}.Path("0.0.1")
	require.EqualError(t, err, "nothing upgrades 0.0.1 (path [0.0.1])")
}
