package image

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// CSVFile is the ClusterServiceVersion of a bundle directory.
const CSVFile = "manifests/app-operator.clusterserviceversion.yaml"

// ManagerImage returns the manager image a bundle directory's ClusterServiceVersion names (its
// relatedImages entry "manager").
func ManagerImage(bundleDir string) (string, error) {
	csv, err := readCSV(bundleDir)
	if err != nil {
		return "", err
	}
	related, _ := csv["spec"].(map[string]any)["relatedImages"].([]any)
	for _, r := range related {
		if m, _ := r.(map[string]any); m["name"] == "manager" {
			if image, _ := m["image"].(string); image != "" {
				return image, nil
			}
		}
	}
	return "", fmt.Errorf("%s: spec.relatedImages has no image named manager", filepath.Join(bundleDir, CSVFile))
}

// ByDigest is an image reference by digest in the repository of ref: repo@sha256:....
func ByDigest(ref string, digest v1.Hash) (string, error) {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	return r.Context().Name() + "@" + digest.String(), nil
}

// PinDigests writes a copy of a bundle directory whose ClusterServiceVersion names images by
// digest: every value equal to a key of pins (the containers' images, relatedImages and the
// containerImage annotation) becomes the reference it maps to. This is operator-sdk's
// --use-image-digests for images built here; everything else is copied as it is. A
// ClusterServiceVersion that says it runs disconnected must, pinned, pass RunsDisconnected;
// nothing is written if it does not.
func PinDigests(src, dst string, pins map[string]string) error {
	csv, err := readCSV(src)
	if err != nil {
		return err
	}
	replaced := replaceStrings(csv, pins)
	if replaced == 0 {
		return fmt.Errorf("%s names none of the images to pin: %v", filepath.Join(src, CSVFile), keys(pins))
	}
	if err := runsDisconnected(csv); err != nil {
		return fmt.Errorf("%s, pinned: %w", filepath.Join(src, CSVFile), err)
	}
	raw, err := yaml.Marshal(csv)
	if err != nil {
		return err
	}
	if err := CopyTree(src, dst); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, CSVFile), raw, 0o644)
}

func readCSV(bundleDir string) (map[string]any, error) {
	path := filepath.Join(bundleDir, CSVFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var csv map[string]any
	if err := yaml.Unmarshal(raw, &csv); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := csv["spec"].(map[string]any); !ok {
		return nil, fmt.Errorf("%s: no spec", path)
	}
	return csv, nil
}

// replaceStrings replaces, in place, every string value that is a key of pins, and counts them.
func replaceStrings(v any, pins map[string]string) int {
	n := 0
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if s, ok := child.(string); ok {
				if to, ok := pins[s]; ok {
					t[k] = to
					n++
				}
				continue
			}
			n += replaceStrings(child, pins)
		}
	case []any:
		for i, child := range t {
			if s, ok := child.(string); ok {
				if to, ok := pins[s]; ok {
					t[i] = to
					n++
				}
				continue
			}
			n += replaceStrings(child, pins)
		}
	}
	return n
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// CopyTree copies the folder src to dst: its folders, and its files with mode 0644.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
