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

func TestCPUPerAppSplitsTheManagerFromTheControlPlane(t *testing.T) {
	for _, tc := range []struct {
		cpu                   map[string]float64
		n                     int
		manager, controlPlane float64
	}{
		{map[string]float64{"manager": 2, "kube-apiserver": 6, "etcd": 2}, 1000, 2, 8},
		{map[string]float64{"kube-apiserver": 1}, 10, 0, 100},
		{map[string]float64{}, 5, 0, 0},
	} {
		manager, controlPlane := cpuPerApp(tc.cpu, tc.n)
		require.InDelta(t, tc.manager, manager, 1e-9, "%v", tc.cpu)
		require.InDelta(t, tc.controlPlane, controlPlane, 1e-9, "%v", tc.cpu)
	}
}
