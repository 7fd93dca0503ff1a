package image

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// The media types of a Helm chart in an OCI registry, as helm push writes and helm pull reads
// them.
const (
	HelmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ChartMeta is what a chart's Chart.yaml says of it that its publication needs.
type ChartMeta struct {
	Name, Version, Description, Home string
}

// Chart is a Helm chart folder as an OCI artifact, as helm push publishes the package helm
// package makes of it: a config holding Chart.yaml as JSON, and one layer, the gzipped tar of
// the folder's files under the chart's name, every time set to created. helm pull and helm
// install oci://... read it. The folder holds regular files only; one with a .helmignore is
// refused, since its rules are not applied.
func Chart(dir string, created time.Time) (v1.Image, ChartMeta, error) {
	chartYAML := filepath.Join(dir, "Chart.yaml")
	raw, err := os.ReadFile(chartYAML)
	if err != nil {
		return nil, ChartMeta{}, err
	}
	config, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, ChartMeta{}, fmt.Errorf("%s: %w", chartYAML, err)
	}
	var meta ChartMeta
	if err := json.Unmarshal(config, &meta); err != nil {
		return nil, ChartMeta{}, fmt.Errorf("%s: %w", chartYAML, err)
	}
	switch {
	case meta.Name == "":
		return nil, ChartMeta{}, fmt.Errorf("%s: name is required", chartYAML)
	case meta.Version == "":
		return nil, ChartMeta{}, fmt.Errorf("%s: version is required", chartYAML)
	}
	if _, err := os.Stat(filepath.Join(dir, ".helmignore")); !errors.Is(err, os.ErrNotExist) {
		return nil, ChartMeta{}, fmt.Errorf("%s: not supported: the chart is published with every file of its folder", filepath.Join(dir, ".helmignore"))
	}
	files, err := readTree(dir, meta.Name)
	if err != nil {
		return nil, ChartMeta{}, err
	}
	layer, err := layerOf(HelmChartMediaType, created, files)
	if err != nil {
		return nil, ChartMeta{}, err
	}
	a := &artifact{config: config, configType: HelmConfigMediaType, layers: []v1.Layer{layer}, annotations: map[string]string{
		"org.opencontainers.image.title":       meta.Name,
		"org.opencontainers.image.version":     meta.Version,
		"org.opencontainers.image.description": meta.Description,
		"org.opencontainers.image.url":         meta.Home,
		"org.opencontainers.image.source":      SourceURL,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
	}}
	img, err := partial.CompressedToImage(a)
	return img, meta, err
}

// artifact is an OCI manifest of a config of any media type and layers: what an image is made
// of, for content that is not a container image.
type artifact struct {
	config      []byte
	configType  types.MediaType
	layers      []v1.Layer
	annotations map[string]string
}

func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (a *artifact) RawConfigFile() ([]byte, error) { return a.config, nil }

func (a *artifact) RawManifest() ([]byte, error) {
	cfgDigest, cfgSize, err := v1.SHA256(bytes.NewReader(a.config))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Annotations: a.annotations,
		Config: v1.Descriptor{MediaType: a.configType, Digest: cfgDigest, Size: cfgSize}}
	for _, l := range a.layers {
		d, err := partial.Descriptor(l)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, *d)
	}
	return json.Marshal(m)
}

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, l := range a.layers {
		if d, err := l.Digest(); err == nil && d == h {
			return l, nil
		}
	}
	return nil, fmt.Errorf("the artifact has no layer %s", h)
}
