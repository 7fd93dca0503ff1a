package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Program is a Go program built into an image.
type Program struct {
	// ModuleDir is the directory of the module it is built in: a checkout, or a tools module.
	ModuleDir string
	// Package is the main package, such as ./cmd.
	Package string
	// Tags are build tags; LDFlags are linker flags added to -s -w.
	Tags, LDFlags []string
	// Env is added to the build's environment.
	Env []string
}

// Toolchain names the Go toolchain every binary is built with, such as go1.26.8: the go command
// runs that version (GOTOOLCHAIN), taking it from the module proxy when the local go differs, so
// that the same source gives the same binary on any machine.
type Toolchain string

// Compile builds a program statically for a platform and returns the binary. Nothing of the
// machine reaches the binary: paths are trimmed, no VCS stamp, no cgo, fixed CPU levels.
func (t Toolchain) Compile(ctx context.Context, p Program, platform v1.Platform) ([]byte, error) {
	out, err := os.MkdirTemp("", "app-operator-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	bin := filepath.Join(out, "program")
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", strings.Join(append([]string{"-s", "-w"}, p.LDFlags...), " "), "-o", bin}
	if len(p.Tags) > 0 {
		args = append(args, "-tags", strings.Join(p.Tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, p.Package)...)
	cmd.Dir = p.ModuleDir
	cmd.Env = append(buildEnv(), "GOTOOLCHAIN="+string(t), "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	cmd.Env = append(cmd.Env, p.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building %s in %s for %s/%s with %s: %w\n%s", p.Package, p.ModuleDir, platform.OS, platform.Architecture, t, err, stderr.String())
	}
	return os.ReadFile(bin)
}

// buildEnv is this process's environment without what changes how Go builds, plus the
// settings every build shares.
func buildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CGO_"), k == "GOFLAGS", k == "GOEXPERIMENT", k == "GOAMD64", k == "GOARM64",
			k == "GOARM", k == "GO386", k == "GOTOOLCHAIN", k == "GOOS", k == "GOARCH", k == "GOWORK":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GOWORK=off", "GOFLAGS=-mod=readonly")
}
