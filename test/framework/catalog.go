package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// ChannelHead returns the head of the stable channel of a catalog directory: the entry no
// other entry replaces.
func ChannelHead(catalogDir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(catalogDir, PackageName, "channel.yaml"))
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
