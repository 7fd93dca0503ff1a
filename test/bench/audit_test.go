package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestManagedRequests(t *testing.T) {
	counts := map[string]int{
		"apply deployments": 3, "patch apps/status": 2, "get deployments": 4, "get services": 1,
		"create events": 7, "update leases": 9, "get configmaps": 5,
	}
	require.Equal(t, 5, managedWrites(counts), "writes to children and App status; not Events, Leases or reads")
	require.Equal(t, 5, managedReads(counts), "reads of children only")
}

func TestRequestsCountsTheUsersCompletedRequestsFromAnOffset(t *testing.T) {
	const sa = "system:serviceaccount:operators:app-operator"
	event := func(stage, user, verb, resource, subresource string) string {
		return `{"stage":"` + stage + `","verb":"` + verb + `","user":{"username":"` + user + `"},` +
			`"objectRef":{"resource":"` + resource + `","subresource":"` + subresource + `"}}` + "\n"
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	first := event("ResponseComplete", sa, "apply", "deployments", "") +
		event("RequestReceived", sa, "apply", "deployments", "") +
		event("ResponseComplete", "someone-else", "apply", "deployments", "") +
		event("ResponseComplete", sa, "patch", "apps", "status")
	require.NoError(t, os.WriteFile(path, []byte(first+`{"stage":"Respo`), 0o600))

	counts, offset, err := requests(path, 0, sa)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"apply deployments": 1, "patch apps/status": 1}, counts)
	require.Equal(t, int64(len(first)), offset, "a partial last line is left for the next read")

	rotated := filepath.Join(filepath.Dir(path), "audit-2026-12-05T05-27-44.188.log")
	require.NoError(t, os.Rename(path, rotated))
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(event("ResponseComplete", sa, "get", "services", ""), 10)), 0o600))
	_, _, err = requests(path, offset, sa)
	require.ErrorContains(t, err, rotated, "a rotated log is named, not counted as if nothing happened")
}
