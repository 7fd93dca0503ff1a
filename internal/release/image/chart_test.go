package image

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

const chartYAML = "apiVersion: v2\nname: demo\nversion: 1.2.0\nappVersion: \"1.2.0\"\ndescription: A demo.\nhome: https://example.com/demo\n"

// chartDir writes a chart folder with Chart.yaml and the given files besides.
func chartDir(t *testing.T, chart string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	files["Chart.yaml"] = chart
	for p, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o600))
	}
	return dir
}

func TestAChartIsPublishedAsHelmPushPublishesIt(t *testing.T) {
	dir := chartDir(t, chartYAML, map[string]string{"values.yaml": "replicas: 2\n", "templates/cm.yaml": "kind: ConfigMap\n"})
	img, meta, err := Chart(dir, when)
	require.NoError(t, err)
	require.Equal(t, ChartMeta{Name: "demo", Version: "1.2.0", Description: "A demo.", Home: "https://example.com/demo"}, meta)

	m, err := img.Manifest()
	require.NoError(t, err)
	require.Equal(t, HelmConfigMediaType, m.Config.MediaType)
	require.Len(t, m.Layers, 1)
	require.Equal(t, HelmChartMediaType, m.Layers[0].MediaType)
	require.Equal(t, "demo", m.Annotations["org.opencontainers.image.title"])
	require.Equal(t, "1.2.0", m.Annotations["org.opencontainers.image.version"])
	require.Equal(t, "2026-12-03T15:26:01Z", m.Annotations["org.opencontainers.image.created"])

	config, err := img.RawConfigFile()
	require.NoError(t, err)
	require.JSONEq(t, `{"apiVersion":"v2","name":"demo","version":"1.2.0","appVersion":"1.2.0","description":"A demo.","home":"https://example.com/demo"}`, string(config))

	layers, err := img.Layers()
	require.NoError(t, err)
	var names []string
	for _, e := range entries(t, layers[0]) {
		names = append(names, e.name)
		require.Equal(t, when, e.mtime, e.name)
	}
	require.Equal(t, []string{"demo/", "demo/Chart.yaml", "demo/templates/", "demo/templates/cm.yaml", "demo/values.yaml"}, names,
		"the chart's files under its name, as helm package packs them")

	again, _, err := Chart(dir, when)
	require.NoError(t, err)
	d1, err := img.Digest()
	require.NoError(t, err)
	d2, err := again.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2, "the same folder gives the same digest")
}

func TestABadChartIsRefusedNamingTheFile(t *testing.T) {
	for name, tc := range map[string]struct {
		chart string
		files map[string]string
		want  string
	}{
		"no version":   {chart: "apiVersion: v2\nname: demo\n", files: map[string]string{}, want: "Chart.yaml: version is required"},
		"no name":      {chart: "apiVersion: v2\nversion: 1.2.0\n", files: map[string]string{}, want: "Chart.yaml: name is required"},
		"not YAML":     {chart: "name: [demo\n", files: map[string]string{}, want: "Chart.yaml: "},
		"a helmignore": {chart: chartYAML, files: map[string]string{".helmignore": "*.bak\n"}, want: ".helmignore: not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Chart(chartDir(t, tc.chart, tc.files), when)
			require.ErrorContains(t, err, tc.want)
		})
	}
	t.Run("a symlink", func(t *testing.T) {
		dir := chartDir(t, chartYAML, map[string]string{})
		require.NoError(t, os.Symlink("Chart.yaml", filepath.Join(dir, "values.yaml")))
		_, _, err := Chart(dir, when)
		require.ErrorContains(t, err, filepath.Join(dir, "values.yaml")+": only regular files")
	})
}

func TestAChartAndImagesGoToALayoutAndARegistryUnderTheirOwnPaths(t *testing.T) {
	ctx := context.Background()
	chart, _, err := Chart(chartDir(t, chartYAML, map[string]string{"values.yaml": "{}\n"}), when)
	require.NoError(t, err)
	idx, err := Builder{Platforms: Platforms}.Bundle(bundleDir(t, "quay.io/mycompany/demo:v1.2.0"), when)
	require.NoError(t, err)
	built := []Built{{Repo: "quay.io/mycompany/demo-bundle", Tag: "v1.2.0", Artifact: idx},
		{Repo: "quay.io/mycompany/charts/demo", Tag: "1.2.0", Artifact: chart}}

	dir := filepath.Join(t.TempDir(), "images")
	require.NoError(t, WriteLayout(dir, built))
	read, err := ReadLayout(dir)
	require.NoError(t, err)
	require.Len(t, read, 2)
	for i := range built {
		want, err := built[i].ByDigest()
		require.NoError(t, err)
		got, err := read[i].ByDigest()
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, isIndex := read[0].Artifact.(v1.ImageIndex)
	_, isImage := read[1].Artifact.(v1.Image)
	require.True(t, isIndex && isImage, "read back as an index and a single manifest")

	reg, err := ServeRegistry("127.0.0.1:0", t.TempDir(), nil)
	require.NoError(t, err)
	defer func() { _ = reg.Close() }()
	local := Rebase(read, reg.Addr+"/mirror")
	require.Equal(t, []string{reg.Addr + "/mirror/demo-bundle:v1.2.0", reg.Addr + "/mirror/charts/demo:1.2.0"}, []string{local[0].Ref(), local[1].Ref()})
	require.NoError(t, Push(ctx, local))
	ref, err := name.ParseReference(local[1].Ref())
	require.NoError(t, err)
	pulled, err := remote.Image(ref, remote.WithContext(ctx))
	require.NoError(t, err)
	m, err := pulled.Manifest()
	require.NoError(t, err)
	require.Equal(t, HelmConfigMediaType, m.Config.MediaType)
	want, err := chart.Digest()
	require.NoError(t, err)
	got, err := pulled.Digest()
	require.NoError(t, err)
	require.Equal(t, want, got)
}
