//go:build tools

// Package tools records the commands this module pins so that `go mod tidy` keeps them.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
