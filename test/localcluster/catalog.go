package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// ChannelHead returns the head of the stable channel of a catalog directory: the entry no
// other entry replaces.
func ChannelHead(catalogDir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(catalogDir, PackageName, "channels", Channel+".yaml"))
	if err != nil {
		return "", err
	}
	var ch struct {
		Entries []struct {
			Name     string `json:"name"`
			Replaces string `json:"replaces"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(raw, &ch); err != nil {
		return "", err
	}
	replaced := map[string]bool{}
	for _, e := range ch.Entries {
		replaced[e.Replaces] = true
	}
	for _, e := range ch.Entries {
		if !replaced[e.Name] {
			return e.Name, nil
		}
	}
	return "", fmt.Errorf("the channel of %s has no head", catalogDir)
}

// PublishCatalog serves the project's catalog as it stood when release upTo was the newest:
// its package, the channel entries up to upTo and their bundles. Serving a later one then
// publishes the next release, as a catalog image update would.
func (c *Cluster) PublishCatalog(ctx context.Context, root, upTo string) error {
	src := filepath.Join(root, "catalog", PackageName)
	dst := filepath.Join(c.Dir, "catalog-"+upTo)
	raw, err := os.ReadFile(filepath.Join(src, "channels", Channel+".yaml"))
	if err != nil {
		return err
	}
	var ch map[string]any
	if err := yaml.Unmarshal(raw, &ch); err != nil {
		return err
	}
	limit, err := semver.Parse(upTo)
	if err != nil {
		return err
	}
	var kept []any
	for _, e := range ch["entries"].([]any) {
		name := e.(map[string]any)["name"].(string)
		v, err := semver.Parse(strings.TrimPrefix(name, PackageName+".v"))
		if err != nil {
			return err
		}
		if v.GT(limit) {
			continue
		}
		kept = append(kept, e)
		if err := copyFile(filepath.Join(src, "bundles", name+".yaml"), filepath.Join(dst, PackageName, "bundles", name+".yaml")); err != nil {
			return err
		}
	}
	ch["entries"] = kept
	out, err := yaml.Marshal(ch)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dst, PackageName, "channels", Channel+".yaml"), out); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(src, "package.yaml"), filepath.Join(dst, PackageName, "package.yaml")); err != nil {
		return err
	}
	return c.ServeCatalog(ctx, dst)
}

func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writeFile(to, raw)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
