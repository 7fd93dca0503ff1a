package main

import (
	"crypto/sha256"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCPUSecondsCountsTheNamedProcesses(t *testing.T) {
	raw, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc on this system")
	}
	self := []string{strings.TrimSpace(string(raw))}
	before, err := cpuSeconds(self)
	require.NoError(t, err)
	require.Contains(t, before, self[0])

	sum := sha256.Sum256(nil)
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		sum = sha256.Sum256(sum[:])
	}
	used, err := cpuSince(self, before)
	require.NoError(t, err)
	require.Greater(t, used[self[0]], 0.05, "300 ms of hashing counted")
	require.Less(t, used[self[0]], 5.0)

	none, err := cpuSeconds([]string{"no-such-command"})
	require.NoError(t, err)
	require.Empty(t, none)
}
