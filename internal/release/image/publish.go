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
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Artifact is what is published under a repository and tag: a multi-platform image
// (v1.ImageIndex) or a single manifest, such as the Helm chart's (v1.Image).
type Artifact interface {
	Digest() (v1.Hash, error)
	MediaType() (types.MediaType, error)
	RawManifest() ([]byte, error)
}

// Built is an artifact built here and the repository and tag it is published under.
type Built struct {
	// Repo is the repository, such as quay.io/mycompany/app-operator; Tag the tag, such as
	// v0.5.0.
	Repo, Tag string
	// Artifact is a v1.ImageIndex or a v1.Image.
	Artifact Artifact
}

// Ref is the artifact's reference by tag.
func (b Built) Ref() string { return b.Repo + ":" + b.Tag }

// ByDigest is the artifact's reference by digest.
func (b Built) ByDigest() (string, error) {
	d, err := b.Artifact.Digest()
	if err != nil {
		return "", err
	}
	return b.Repo + "@" + d.String(), nil
}

// Digest is the digest of the artifact's manifest or index.
func (b Built) Digest() (v1.Hash, error) { return b.Artifact.Digest() }

// Rebase moves artifacts from the repository base they share to another (a registry host and
// path), each keeping its path below it: with quay.io/mycompany/app-operator and
// quay.io/mycompany/charts/app-operator, the base is quay.io/mycompany, and moved to
// 127.0.0.1:5000/mycompany they are 127.0.0.1:5000/mycompany/app-operator and
// 127.0.0.1:5000/mycompany/charts/app-operator. One artifact's base is its repository's
// directory.
func Rebase(built []Built, to string) []Built {
	if len(built) == 0 {
		return nil
	}
	from := path.Dir(built[0].Repo)
	for _, b := range built[1:] {
		for !strings.HasPrefix(b.Repo, from+"/") && from != "." {
			from = path.Dir(from)
		}
	}
	out := make([]Built, 0, len(built))
	for _, b := range built {
		rest := strings.TrimPrefix(b.Repo, from+"/")
		out = append(out, Built{Repo: strings.TrimSuffix(to, "/") + "/" + rest, Tag: b.Tag, Artifact: b.Artifact})
	}
	return out
}

// RefNameAnnotation names an artifact in an OCI image layout.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout holding the artifacts, each annotated with
// its reference.
func WriteLayout(dir string, built []Built) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, b := range built {
		named := layout.WithAnnotations(map[string]string{RefNameAnnotation: b.Ref()})
		switch a := b.Artifact.(type) {
		case v1.ImageIndex:
			err = p.AppendIndex(a, named)
		case v1.Image:
			err = p.AppendImage(a, named)
		default:
			err = fmt.Errorf("a %T is neither an image nor an index", a)
		}
		if err != nil {
			return fmt.Errorf("writing %s to %s: %w", b.Ref(), dir, err)
		}
	}
	return nil
}

// ReadLayout returns the artifacts of an OCI image layout.
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
			return nil, fmt.Errorf("an artifact of %s is not named by tag: %w", dir, err)
		}
		var a Artifact
		if d.MediaType.IsIndex() {
			a, err = idx.ImageIndex(d.Digest)
		} else {
			a, err = idx.Image(d.Digest)
		}
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", ref, dir, err)
		}
		out = append(out, Built{Repo: ref.Context().Name(), Tag: ref.TagStr(), Artifact: a})
	}
	return out, nil
}

// Push pushes each artifact to its repository under its tag, which also makes it addressable
// by digest. It authenticates as docker login and the container tools do
// (~/.docker/config.json, $DOCKER_CONFIG, credential helpers), and anonymously to a registry
// they hold nothing for. A registry that cannot be reached fails naming it.
func Push(ctx context.Context, built []Built) error {
	for _, b := range built {
		ref, err := name.NewTag(b.Ref())
		if err != nil {
			return fmt.Errorf("artifact %s: %w", b.Ref(), err)
		}
		if err := remote.Push(ref, b.Artifact, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("pushing %s to registry %s: %w", b.Ref(), ref.Context().RegistryStr(), err)
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
