// Package image assembles App Operator's OCI images from its checkout, without a container
// engine: reproducible layers (layer.go), images and multi-platform indexes (image.go), Go
// programs built for each platform with a pinned toolchain (gobuild.go), the images of a
// release (products.go, catalog.go), digest pinning in a bundle (pin.go), and OCI layouts,
// pushes and a loopback registry (publish.go).
package image

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platforms are the platforms every image of a release is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Config is what an image runs, and its labels.
type Config struct {
	User       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// Ports are the ports the image listens on, such as 8080/tcp.
	Ports  []string
	Labels map[string]string
}

// Assemble makes an OCI image of one platform from layers, created at created.
func Assemble(p v1.Platform, created time.Time, cfg Config, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		var err error
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "app-operator image builder"}}); err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{User: cfg.User, Entrypoint: cfg.Entrypoint, Cmd: cfg.Cmd, Env: cfg.Env,
		WorkingDir: cfg.WorkingDir, Labels: cfg.Labels}
	if len(cfg.Ports) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range cfg.Ports {
			cf.Config.ExposedPorts[p] = struct{}{}
		}
	}
	return mutate.ConfigFile(img, cf)
}

// RepoPath is the path of a repository below its registry host: quay.io/x/y is x/y.
func RepoPath(repo string) string {
	_, rest, _ := strings.Cut(repo, "/")
	return rest
}

// IndexOf makes a multi-platform OCI index of images, one per platform in the order given.
func IndexOf(platforms []v1.Platform, images []v1.Image) (v1.ImageIndex, error) {
	if len(platforms) != len(images) || len(images) == 0 {
		return nil, fmt.Errorf("an index needs one image per platform, got %d platforms and %d images", len(platforms), len(images))
	}
	var adds []mutate.IndexAddendum
	for i, img := range images {
		p := platforms[i]
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...), nil
}
