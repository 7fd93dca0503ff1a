package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mycompany/app-operator/internal/release"
)

// ManagerFor returns the manager binary of a ClusterServiceVersion of the catalog. A release
// cut from an earlier commit is built from that commit, in a git worktree, so that upgrade
// tests run the old release's real code; a release whose code is the checkout's, or one not
// cut yet, runs bin/manager.
func ManagerFor(ctx context.Context, root, bin, csvName string) (string, error) {
	current := filepath.Join(bin, "manager")
	releases, err := release.Load(filepath.Join(root, "catalog"))
	if err != nil {
		return "", err
	}
	var r release.Release
	found := false
	for _, rel := range releases {
		if rel.CSVName() == csvName && rel.Cut() {
			r, found = rel, true
		}
	}
	if !found {
		return current, nil
	}
	if err := git(ctx, root, "cat-file", "-e", r.Commit+"^{commit}"); err != nil {
		return "", fmt.Errorf("release %s was cut from commit %s, which this clone does not have: fetch the full history (git fetch --unshallow)", r.Version, r.Commit)
	}
	if git(ctx, root, "diff", "--quiet", r.Commit, "--", "cmd", "api", "controllers", "internal", "go.mod", "go.sum") == nil {
		return current, nil
	}
	out := filepath.Join(bin, "releases", r.Version+"-"+r.Commit[:12], "manager")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tree, err := os.MkdirTemp("", "app-operator-"+r.Version+"-")
	if err != nil {
		return "", err
	}
	defer func() {
		_ = git(context.Background(), root, "worktree", "remove", "--force", tree)
		_ = os.RemoveAll(tree)
	}()
	if err := git(ctx, root, "worktree", "add", "--detach", tree, r.Commit); err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd")
	build.Dir = tree
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager of release %s from %s: %w\n%s", r.Version, r.Commit, err, b)
	}
	return out, nil
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
