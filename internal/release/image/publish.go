package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Built is an image built here and the repository and tag it is published under.
type Built struct {
	// Repo is the image's repository, such as quay.io/mycompany/app-operator; Tag its tag,
	// such as v0.5.0.
	Repo, Tag string
	Index     v1.ImageIndex
}

// Ref is the image's reference by tag.
func (b Built) Ref() string { return b.Repo + ":" + b.Tag }

// ByDigest is the image's reference by digest.
func (b Built) ByDigest() (string, error) {
	d, err := b.Index.Digest()
	if err != nil {
		return "", err
	}
	return b.Repo + "@" + d.String(), nil
}

// In is the image published under another repository base (a registry host and path, such as
// 127.0.0.1:5000/mycompany): the last element of its repository, under base.
func (b Built) In(base string) Built {
	return Built{Repo: strings.TrimSuffix(base, "/") + "/" + path.Base(b.Repo), Tag: b.Tag, Index: b.Index}
}

// Digest is the digest of the image's index.
func (b Built) Digest() (v1.Hash, error) { return b.Index.Digest() }

// RefNameAnnotation names an image in an OCI image layout.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout holding the images, each annotated with its
// reference.
func WriteLayout(dir string, images []Built) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, img := range images {
		if err := p.AppendIndex(img.Index, layout.WithAnnotations(map[string]string{RefNameAnnotation: img.Ref()})); err != nil {
			return fmt.Errorf("writing %s to %s: %w", img.Ref(), dir, err)
		}
	}
	return nil
}

// ReadLayout returns the images of an OCI image layout.
func ReadLayout(dir string) ([]Built, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the image layout %s (make images writes it): %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Built
	for _, d := range m.Manifests {
		ref, err := name.NewTag(d.Annotations[RefNameAnnotation])
		if err != nil {
			return nil, fmt.Errorf("an image of %s is not named by tag: %w", dir, err)
		}
		img, err := idx.ImageIndex(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", ref, dir, err)
		}
		out = append(out, Built{Repo: ref.Context().Name(), Tag: ref.TagStr(), Index: img})
	}
	return out, nil
}

// Push pushes each image to its repository under its tag, which also makes it addressable by
// digest. It authenticates as docker login and the container tools do (~/.docker/config.json,
// $DOCKER_CONFIG, credential helpers), and anonymously to a registry they hold nothing for. A
// registry that cannot be reached fails naming it.
func Push(ctx context.Context, images []Built) error {
	for _, img := range images {
		ref, err := name.NewTag(img.Ref())
		if err != nil {
			return fmt.Errorf("image %s: %w", img.Ref(), err)
		}
		if err := remote.WriteIndex(ref, img.Index, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("pushing %s to registry %s: %w", img.Ref(), ref.Context().RegistryStr(), err)
		}
	}
	return nil
}

// Registry is an OCI registry (go-containerregistry's) serving on a loopback address, with its
// blobs on disk. It holds what is pushed to it while it runs.
type Registry struct {
	// Addr is where it serves, host:port.
	Addr   string
	server *http.Server
	done   chan error
}

// ServeRegistry starts a registry on addr (127.0.0.1:0 picks a free port) keeping blobs in dir.
func ServeRegistry(addr, dir string, logs *log.Logger) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving a registry on %s: %w", addr, err)
	}
	if logs == nil {
		logs = log.New(io.Discard, "", 0)
	}
	r := &Registry{Addr: ln.Addr().String(), done: make(chan error, 1),
		server: &http.Server{Handler: registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(logs)),
			ReadHeaderTimeout: 10 * time.Second}}
	go func() { r.done <- r.server.Serve(ln) }()
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.server.Shutdown(ctx)
	if serveErr := <-r.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// Wait blocks until the registry stops serving.
func (r *Registry) Wait() error {
	err := <-r.done
	r.done <- err
	return err
}
