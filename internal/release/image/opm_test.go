package image

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"
)

// opmTools lays out a tools module whose opm and grpc_health_probe are small programs of
// its own, at the import paths the olm tools module pins, and returns the tools directory and
// a function that changes what opm prints.
func opmTools(t *testing.T) (string, func(string)) {
	t.Helper()
	tools := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		path = filepath.Join(tools, "olm", filepath.FromSlash(path))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	write("go.mod", `module tools

go 1.26

require (
	github.com/grpc-ecosystem/grpc-health-probe v0.0.0
	github.com/operator-framework/operator-registry v0.0.0
)

replace github.com/grpc-ecosystem/grpc-health-probe => ./probe

replace github.com/operator-framework/operator-registry => ./registry
`)
	write("probe/go.mod", "module github.com/grpc-ecosystem/grpc-health-probe\n\ngo 1.26\n")
	write("probe/main.go", "package main\n\nfunc main() {}\n")
	write("registry/go.mod", "module github.com/operator-framework/operator-registry\n\ngo 1.26\n")
	say := func(s string) {
		write("registry/cmd/opm/main.go", "package main\n\nfunc main() { println(\""+s+"\") }\n")
	}
	say("first")
	return tools, say
}

func opmLayerFile(t *testing.T, l v1.Layer) string {
	t.Helper()
	for _, e := range entries(t, l) {
		if e.name == "bin/opm" {
			return e.data
		}
	}
	t.Fatal("the opm layer holds no bin/opm")
	return ""
}

// TestTheOPMLayerIsBuiltOncePerLayers builds the opm layer, changes opm's source and builds it
// again: a Builder with Layers reuses the first layer, in the opm image too; one without
// builds the changed opm.
func TestTheOPMLayerIsBuiltOncePerLayers(t *testing.T) {
	ctx := context.Background()
	tools, say := opmTools(t)
	host := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	shared := Builder{Toolchain: "local", Platforms: []v1.Platform{host}, ToolsDir: tools, Layers: &sync.Map{}}
	alone := shared
	alone.Layers = nil

	first, err := shared.opmLayer(ctx, host, when)
	require.NoError(t, err)
	built := opmLayerFile(t, first)
	say("second")

	again, err := shared.opmLayer(ctx, host, when)
	require.NoError(t, err)
	require.Same(t, first, again, "the layer is the one built first")
	idx, err := shared.OPM(ctx, when)
	require.NoError(t, err)
	img := onlyImage(t, idx)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	require.Equal(t, digest(t, first), digest(t, layers[0]), "the opm image holds the layer built first")

	later, err := shared.opmLayer(ctx, host, when.Add(1e9))
	require.NoError(t, err)
	require.NotEqual(t, built, opmLayerFile(t, later), "another time is another layer, built from opm's changed source")

	rebuilt, err := alone.opmLayer(ctx, host, when)
	require.NoError(t, err)
	require.NotEqual(t, built, opmLayerFile(t, rebuilt), "without Layers, opm is built from its changed source")
}

func digest(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	h, err := l.Digest()
	require.NoError(t, err)
	return h
}

func onlyImage(t *testing.T, idx v1.ImageIndex) v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 1)
	img, err := idx.Image(m.Manifests[0].Digest)
	require.NoError(t, err)
	return img
}
