package main

import (
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
