package publish

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mycompany/app-operator/internal/checkout"
	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/image"
)

// TestACutReleaseBuiltIntoTheCacheLeavesNothingBehind builds the first cut release from its
// commit into an empty cache: the worktree and the temporary bundle are gone once Build
// returns, and what it returns is what the cache gives back later.
func TestACutReleaseBuiltIntoTheCacheLeavesNothingBehind(t *testing.T) {
	root, err := checkout.Root()
	require.NoError(t, err)
	releases, err := release.Load(filepath.Join(root, "catalog"))
	require.NoError(t, err)
	p, err := ForCheckout(context.Background(), root, "quay.io/mycompany/app-operator")
	require.NoError(t, err)
	p.CacheDir = t.TempDir()
	p.Platforms = image.Platforms[:1] // one is enough to see what a build leaves
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the worktree and the bundle are made

	built, err := p.Build(context.Background(), releases.Cut()[0])
	require.NoError(t, err)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "what the build left in the temporary directory")
	worktrees, err := exec.Command("git", "-C", root, "worktree", "list").Output()
	require.NoError(t, err)
	require.NotContains(t, string(worktrees), tmp, "a worktree of the build is still registered")
	require.DirExists(t, filepath.Join(built.PinnedBundle, "manifests"), "the bundle, read back from the cache")
	require.True(t, strings.HasPrefix(built.PinnedBundle, p.CacheDir), built.PinnedBundle)

	again, err := p.Build(context.Background(), releases.Cut()[0])
	require.NoError(t, err)
	first, err := built.Manager.Artifact.Digest()
	require.NoError(t, err)
	second, err := again.Manager.Artifact.Digest()
	require.NoError(t, err)
	require.Equal(t, first, second, "the manager image, built and then read back")
}
