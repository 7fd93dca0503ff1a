package localcluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExitErrorQuotesTheEndOfTheLog(t *testing.T) {
	dir := t.TempDir()
	running, err := StartProcess(dir, "running", "/bin/sleep", []string{"30"}, nil)
	require.NoError(t, err)
	assert.NoError(t, running.ExitError(), "a running process has no exit error")
	require.NoError(t, running.Kill())
	assert.ErrorContains(t, running.ExitError(), "running exited (signal: killed)")

	refused, err := StartProcess(dir, "refuses", "/bin/sh",
		[]string{"-c", `for i in 1 2 3 4 5 6; do echo "line $i"; done; echo "--workers: must be at least 1" >&2; exit 2`}, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.Error(t, refused.WaitExit(ctx))

	err = refused.ExitError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refuses exited (exit status 2)")
	assert.Contains(t, err.Error(), "line 3\nline 4\nline 5\nline 6\n--workers: must be at least 1")
	assert.NotContains(t, err.Error(), "line 2", "only the last lines are quoted")
}
