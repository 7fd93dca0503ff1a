//go:build tools

// Package tools records the commands this module pins so that `go mod tidy` keeps them.
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
