package release

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiagramDrawsTheChannelTheJumpsAndTheDeprecations(t *testing.T) {
	deprecated := &Deprecation{In: "0.3.0", Message: "old"}
	for _, tc := range []struct {
		name string
		rs   Releases
		want []string
	}{
		{"one release being prepared", Releases{{Version: "0.1.0"}},
			[]string{`  v0_1_0["0.1.0<br/>being prepared"]`}},
		{"each release skips every earlier one: one jump from the first",
			Releases{{Version: "0.1.0", Commit: commitA}, {Version: "0.2.0", Commit: commitB}, {Version: "0.3.0"}},
			[]string{`  v0_1_0["0.1.0"]`, `  v0_2_0["0.2.0"]`, `  v0_3_0["0.3.0<br/>being prepared"]`,
				"  v0_1_0 --> v0_2_0", "  v0_2_0 --> v0_3_0", "  v0_1_0 -.-> v0_3_0"}},
		{"a release that skips nothing: the channel only",
			Releases{{Version: "0.1.0", Commit: commitA}, {Version: "0.2.0", Commit: commitB}, {Version: "0.3.0", SkipRange: NoSkipRange}},
			[]string{`  v0_1_0["0.1.0"]`, `  v0_2_0["0.2.0"]`, `  v0_3_0["0.3.0<br/>being prepared"]`,
				"  v0_1_0 --> v0_2_0", "  v0_2_0 --> v0_3_0"}},
		{"a narrowed skipRange: the first goes through the second",
			Releases{{Version: "0.1.0", Commit: commitA, Deprecated: deprecated}, {Version: "0.2.0", Commit: commitB},
				{Version: "0.3.0", SkipRange: ">=0.2.0 <0.3.0"}},
			[]string{`  v0_1_0["0.1.0"]:::deprecated`, `  v0_2_0["0.2.0"]`, `  v0_3_0["0.3.0<br/>being prepared"]`,
				"  v0_1_0 --> v0_2_0", "  v0_2_0 --> v0_3_0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rs.Diagram()
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			require.Equal(t, "flowchart LR", lines[0])
			require.Equal(t, "  classDef deprecated fill:#eeeeee,stroke:#999999,color:#666666", lines[len(lines)-1])
			require.ElementsMatch(t, tc.want, lines[1:len(lines)-1])
		})
	}
}

// docs/releases.md draws the committed record's upgrade graph.
func TestTheReleasesDocDrawsTheRecord(t *testing.T) {
	rs, err := Load("../../catalog")
	require.NoError(t, err)
	diagram, err := rs.Diagram()
	require.NoError(t, err)
	doc, err := os.ReadFile("../../docs/releases.md")
	require.NoError(t, err)
	block := "```mermaid\n" + diagram + "```\n"
	require.True(t, strings.Contains(string(doc), block),
		"docs/releases.md does not draw catalog/releases.yaml's upgrade graph; put this block under its first heading:\n%s", block)
}
