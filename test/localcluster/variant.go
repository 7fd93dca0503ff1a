package localcluster

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mycompany/app-operator/internal/release/image"
)

// PushWithArgs pushes, as the image ref to, a copy of the image from in the cluster's registry
// whose program starts with args: another release of the same program, one that behaves
// differently, such as a workload that never becomes ready.
func (c *Cluster) PushWithArgs(ctx context.Context, from, to string, args []string) error {
	repo, tag := splitTag(from)
	src, err := name.NewTag(c.inRegistry(repo) + ":" + tag)
	if err != nil {
		return err
	}
	idx, err := remote.Index(src, remote.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("pulling %s from the cluster's registry: %w", from, err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	var platforms []v1.Platform
	var images []v1.Image
	for _, desc := range manifest.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cfg := cf.Config
		cfg.Cmd = args
		if img, err = mutate.Config(img, cfg); err != nil {
			return err
		}
		if desc.Platform == nil {
			return fmt.Errorf("%s: manifest %s names no platform", from, desc.Digest)
		}
		platforms, images = append(platforms, *desc.Platform), append(images, img)
	}
	out, err := image.IndexOf(platforms, images)
	if err != nil {
		return err
	}
	repo, tag = splitTag(to)
	return c.Push(ctx, image.Built{Repo: repo, Tag: tag, Artifact: out})
}
