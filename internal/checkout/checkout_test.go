package checkout

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromFindsTheNearestDirectoryHoldingTheMarker(t *testing.T) {
	top := t.TempDir()
	nested := filepath.Join(top, "repo", "test", "upgrade")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(top, "repo", marker), nil, 0o644))

	for _, tc := range []struct {
		name, from, want, err string
	}{
		{name: "the root itself", from: filepath.Join(top, "repo"), want: filepath.Join(top, "repo")},
		{name: "a package two levels down", from: nested, want: filepath.Join(top, "repo")},
		{name: "outside any checkout", from: top, err: "no PROJECT file in " + top + " or any directory above it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := from(tc.from)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRootStartsFromTheWorkingDirectory(t *testing.T) {
	root, err := from(".")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"), "this package's checkout")

	t.Chdir(t.TempDir())
	_, err = Root()
	require.ErrorContains(t, err, "run from within the App Operator checkout")
}
