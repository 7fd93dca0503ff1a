//go:build tools

// Package tools records the commands this module pins so that `go mod tidy` keeps them.
package tools

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
	_ "sigs.k8s.io/kustomize/kustomize/v5"
)
