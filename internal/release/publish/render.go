package publish

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mycompany/app-operator/internal/release/image"
)

// Render renders a bundle image with opm, as a publisher renders a bundle into a catalog: the
// image is pushed to a registry of this process on loopback, opm renders it from there by
// digest, and the rendering names the image in its own repository.
func Render(ctx context.Context, opm string, bundle image.Built) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "app-operator-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	reg, err := image.ServeRegistry("127.0.0.1:0", filepath.Join(tmp, "registry"), nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = reg.Close() }()

	local := image.Rebase([]image.Built{bundle}, reg.Addr+"/"+base(image.RepoPath(bundle.Repo)))[0]
	if err := image.Push(ctx, []image.Built{local}); err != nil {
		return nil, err
	}
	ref, err := local.ByDigest()
	if err != nil {
		return nil, err
	}
	published, err := bundle.ByDigest()
	if err != nil {
		return nil, err
	}
	// opm pulls through containers/image, which needs a signature policy; the registry speaks
	// plain HTTP on loopback.
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"),
		[]byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, opm, "render", "--use-http", ref, "-o", "yaml")
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("opm render %s: %w: %s", ref, err, strings.TrimSpace(stderr.String()))
	}
	if !bytes.Contains(out, []byte(ref)) {
		return nil, fmt.Errorf("opm render %s does not name the image it rendered", ref)
	}
	return bytes.ReplaceAll(out, []byte(ref), []byte(published)), nil
}
