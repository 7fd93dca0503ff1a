package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/mycompany/app-operator/internal/release/image"
)

// The local cluster's own images: what the node and OLM run besides App Operator, assembled
// from the static binaries built into bin/ from the pinned tools modules, and pulled from the
// loopback registry as localcluster.local/<name>.
var (
	// OLMImage runs OLM's operators and holds what its bundle unpack Jobs copy (cpb, cp) and
	// its registry pods extract (copy-content): its util image.
	OLMImage = LocalImageHost + "/olm:v0.36.0"
	// OPMImage serves catalogs and extracts bundles in OLM's unpack Jobs.
	OPMImage = LocalImageHost + "/opm:v1.60.0"
	// CoreDNSImage is the cluster's DNS.
	CoreDNSImage = LocalImageHost + "/coredns:v1.15.0"
)

// hostPlatform is the platform of this machine's node.
var hostPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// infraImage is one of the local cluster's own images.
type infraImage struct {
	ref   string
	files map[string]string // path in the image: binary in bin/
	uid   int
	cfg   image.Config
}

func infraImages() []infraImage {
	return []infraImage{
		{ref: PauseImage, files: map[string]string{"pause": "pause"}, uid: 65535,
			cfg: image.Config{User: "65535:65535", Entrypoint: []string{"/pause"}}},
		{ref: OLMImage, uid: 1001, files: map[string]string{"bin/olm": "olm", "bin/catalog": "catalog", "bin/cpb": "cpb",
			"bin/copy-content": "copy-content", "bin/cp": "cp"}, cfg: image.Config{User: "1001", Env: []string{"PATH=/bin"}}},
		{ref: OPMImage, uid: 1001, files: map[string]string{"bin/opm": "opm", "bin/grpc_health_probe": "grpc_health_probe"},
			cfg: image.Config{User: "1001", Entrypoint: []string{"/bin/opm"}, Env: []string{"PATH=/bin"}}},
		{ref: CoreDNSImage, uid: 65532, files: map[string]string{"coredns": "coredns"},
			cfg: image.Config{User: "65532:65532", Entrypoint: []string{"/coredns"}}},
		{ref: MetricsServerImage, uid: 1000, files: map[string]string{"metrics-server": "metrics-server"},
			cfg: image.Config{User: "1000:1000", Entrypoint: []string{"/metrics-server"}}},
	}
}

// pushInfraImages assembles the local cluster's own images and pushes them to the registry.
func (c *Cluster) pushInfraImages(ctx context.Context) error {
	created := time.Unix(0, 0).UTC()
	var built []image.Built
	for _, img := range infraImages() {
		files := []image.File{
			{Path: "etc/passwd", Data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nuser:x:%d:%d:user:/:/sbin/nologin\n", img.uid, img.uid))},
			{Path: "etc/group", Data: []byte(fmt.Sprintf("root:x:0:\nuser:x:%d:\n", img.uid))},
			{Path: "etc/nsswitch.conf", Data: []byte("hosts: files dns\n")},
		}
		for path, name := range img.files {
			data, err := os.ReadFile(filepath.Join(c.Bin, name))
			if err != nil {
				return fmt.Errorf("%s for image %s: %w (make tools builds it)", name, img.ref, err)
			}
			files = append(files, image.File{Path: path, Mode: 0o755, Data: data})
		}
		layer, err := image.Layer(created, files, image.Dir{Path: "tmp", Mode: os.ModeSticky | 0o777})
		if err != nil {
			return err
		}
		one, err := image.Assemble(hostPlatform, created, img.cfg, layer)
		if err != nil {
			return err
		}
		idx, err := image.IndexOf([]v1.Platform{hostPlatform}, []v1.Image{one})
		if err != nil {
			return err
		}
		repo, tag := splitTag(img.ref)
		built = append(built, image.Built{Repo: repo, Tag: tag, Artifact: idx})
	}
	return c.Push(ctx, built...)
}

// Push pushes images to the cluster's registry, under the path of their repository: what the
// node pulls as quay.io/x/y or localcluster.local/y is served from <registry>/x/y or
// <registry>/y.
func (c *Cluster) Push(ctx context.Context, images ...image.Built) error {
	var local []image.Built
	for _, img := range images {
		local = append(local, image.Built{Repo: c.inRegistry(img.Repo), Tag: img.Tag, Artifact: img.Artifact})
	}
	return image.Push(ctx, local)
}

// inRegistry is the repository of the cluster's registry that serves repo: quay.io/x/y is
// <registry>/x/y.
func (c *Cluster) inRegistry(repo string) string { return c.Registry + "/" + image.RepoPath(repo) }

func splitTag(ref string) (repo, tag string) {
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case ':':
			return ref[:i], ref[i+1:]
		case '/':
			return ref, "latest"
		}
	}
	return ref, "latest"
}
