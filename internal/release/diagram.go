package release

import (
	"fmt"
	"strings"
)

// Diagram draws the upgrade graph as a Mermaid flowchart, oldest release first: a solid arrow
// from each release to the one that replaces it (the channel), a dashed arrow from a release
// to the one OLM upgrades it to (Next) where that is a jump through a skipRange, and the
// releases the catalog marks deprecated in grey. docs/releases.md shows it, and a test keeps
// it the record's.
func (rs Releases) Diagram() (string, error) {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, r := range rs {
		label := r.Version
		if !r.Cut() {
			label += "<br/>being prepared"
		}
		class := ""
		if r.Deprecated != nil {
			class = ":::deprecated"
		}
		fmt.Fprintf(&b, "  %s[\"%s\"]%s\n", node(r.Version), label, class)
	}
	for i := 1; i < len(rs); i++ {
		fmt.Fprintf(&b, "  %s --> %s\n", node(rs[i-1].Version), node(rs[i].Version))
	}
	for i, r := range rs[:len(rs)-1] {
		next, err := rs.Next(r.Version)
		if err != nil {
			return "", err
		}
		if next != "" && next != rs[i+1].Version {
			fmt.Fprintf(&b, "  %s -.-> %s\n", node(r.Version), node(next))
		}
	}
	b.WriteString("  classDef deprecated fill:#eeeeee,stroke:#999999,color:#666666\n")
	return b.String(), nil
}

// node is a release's node in the diagram: Mermaid's names hold no dots.
func node(version string) string {
	return "v" + strings.NewReplacer(".", "_", "-", "_", "+", "_").Replace(version)
}
