package chart_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
	"github.com/mycompany/app-operator/test/chart"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestThePublishedChartIsTheChartFolder publishes the chart as make images and make
// images-push do, to a registry on loopback, and pulls it with Helm's own client, as
// helm install oci://... does: Helm reads it as the chart of the folder, file for file.
func TestThePublishedChartIsTheChartFolder(t *testing.T) {
	ctx := context.Background()
	releases, err := release.Load(filepath.Join(root, "catalog"))
	require.NoError(t, err)
	version := releases.Latest().Version
	p, err := publish.ForCheckout(ctx, root, localcluster.TagBase)
	require.NoError(t, err)
	built, ok, err := p.Chart(image.Source{Dir: root, Version: version, Created: time.Unix(0, 0)})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "quay.io/mycompany/charts/app-operator:"+version, built.Ref())

	reg, err := image.ServeRegistry("127.0.0.1:0", t.TempDir(), nil)
	require.NoError(t, err)
	defer func() { _ = reg.Close() }()
	local := image.Rebase([]image.Built{built}, reg.Addr+"/mycompany/charts")
	require.NoError(t, image.Push(ctx, local))

	pulled, err := chart.Pull(reg.Addr+"/mycompany/charts/app-operator", version)
	require.NoError(t, err)
	folder, err := chart.Load()
	require.NoError(t, err)
	require.Equal(t, folder.Metadata, pulled.Metadata)
	require.Equal(t, folder.Values, pulled.Values)
	require.JSONEq(t, string(folder.Schema), string(pulled.Schema))
	require.Equal(t, contents(folder.Templates), contents(pulled.Templates))
	require.Equal(t, contents(folder.Files), contents(pulled.Files))
	require.NotEmpty(t, contents(pulled.Templates))
}

func TestAChartNotAtTheReleasesVersionIsNotPublished(t *testing.T) {
	p, err := publish.ForCheckout(context.Background(), root, localcluster.TagBase)
	require.NoError(t, err)
	dir := t.TempDir()
	_, ok, err := p.Chart(image.Source{Dir: dir, Version: "0.4.0", Created: time.Unix(0, 0)})
	require.NoError(t, err)
	require.False(t, ok, "a release cut before the chart has none")

	require.NoError(t, os.CopyFS(filepath.Join(dir, publish.ChartDir), os.DirFS(chart.Dir())))
	_, _, err = p.Chart(image.Source{Dir: dir, Version: "9.9.9", Created: time.Unix(0, 0)})
	require.ErrorContains(t, err, filepath.Join(dir, publish.ChartDir, "Chart.yaml")+": version ")
	require.ErrorContains(t, err, "is not the release's, 9.9.9")
}

// TestACutReleaseReadFromTheCacheIsPublishedWithItsChart: make images VERSION=<a cut release>
// publishes the chart of that release's source even when its manager and bundle come from the
// cache of earlier builds (bin/images), which keeps no source. (The first Build of a checkout
// builds the release; make test's make catalog has built it already.)
func TestACutReleaseReadFromTheCacheIsPublishedWithItsChart(t *testing.T) {
	ctx := context.Background()
	releases, err := release.Load(filepath.Join(root, "catalog"))
	require.NoError(t, err)
	cut := releases.Cut()
	r := cut[len(cut)-1]
	p, err := publish.ForCheckout(ctx, root, localcluster.TagBase)
	require.NoError(t, err)
	built, err := p.Build(ctx, r)
	require.NoError(t, err)
	built.Close()

	cached, err := p.Build(ctx, r)
	require.NoError(t, err)
	defer cached.Close()
	src, done, err := p.Source(ctx, cached)
	require.NoError(t, err)
	tree := src.Dir
	ch, ok, err := p.Chart(src)
	done()
	require.NoError(t, err)
	require.True(t, ok, "release %s has its chart", r.Version)
	require.Equal(t, "quay.io/mycompany/charts/app-operator:"+r.Version, ch.Ref())
	require.NoDirExists(t, tree, "the checkout is removed")
}

// contents are a chart's files by name.
func contents(files []*chartcommon.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Name] = string(f.Data)
	}
	return out
}
