package image

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

var when = time.Date(2026, 12, 3, 15, 26, 1, 0, time.UTC)

type entry struct {
	name     string
	typ      byte
	mode     int64
	uid, gid int
	mtime    time.Time
	data     string
}

func entries(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	var out []entry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, entry{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.UTC(), string(data)})
	}
}

func TestALayerIsTheSameForTheSameFilesInAnyOrder(t *testing.T) {
	files := []File{{Path: "manager", Mode: 0o755, Data: []byte("binary")}, {Path: "etc/passwd", Data: []byte("root")}}
	a, err := Layer(when, files)
	require.NoError(t, err)
	b, err := Layer(when, []File{files[1], files[0]})
	require.NoError(t, err)
	da, err := a.Digest()
	require.NoError(t, err)
	db, err := b.Digest()
	require.NoError(t, err)
	require.Equal(t, da, db)

	later, err := Layer(when.Add(time.Second), files)
	require.NoError(t, err)
	dl, err := later.Digest()
	require.NoError(t, err)
	require.NotEqual(t, da, dl, "the time is part of the layer")

	mt, err := a.MediaType()
	require.NoError(t, err)
	require.Equal(t, types.OCILayer, mt)
}

func TestALayerHoldsItsFilesParentsFirstWithTheirOwnersAndModes(t *testing.T) {
	l, err := Layer(when, []File{
		{Path: "usr/local/bin/app", Mode: 0o755, Data: []byte("bin")},
		{Path: "tmp/cache/db", Mode: 0o640, UID: 1001, GID: 1001, Data: []byte("db")},
		{Path: "etc/passwd", Data: []byte("root")},
	}, Dir{Path: "tmp", Mode: os.ModeSticky | 0o777})
	require.NoError(t, err)
	require.Equal(t, []entry{
		{"etc/", tar.TypeDir, 0o755, 0, 0, when, ""},
		{"etc/passwd", tar.TypeReg, 0o644, 0, 0, when, "root"},
		{"tmp/", tar.TypeDir, 0o1777, 0, 0, when, ""},
		{"tmp/cache/", tar.TypeDir, 0o755, 0, 0, when, ""},
		{"tmp/cache/db", tar.TypeReg, 0o640, 1001, 1001, when, "db"},
		{"usr/", tar.TypeDir, 0o755, 0, 0, when, ""},
		{"usr/local/", tar.TypeDir, 0o755, 0, 0, when, ""},
		{"usr/local/bin/", tar.TypeDir, 0o755, 0, 0, when, ""},
		{"usr/local/bin/app", tar.TypeReg, 0o755, 0, 0, when, "bin"},
	}, entries(t, l))
}

func TestALayerRefusesPathsOutsideTheImageAndDuplicates(t *testing.T) {
	_, err := Layer(when, []File{{Path: "../etc/passwd"}})
	require.EqualError(t, err, `layer file "../etc/passwd": not a path inside the image`)
	_, err = Layer(when, []File{{Path: "a"}, {Path: "/a"}})
	require.EqualError(t, err, "layer file a: given twice")
}

func TestAnImageCarriesItsPlatformConfigAndTime(t *testing.T) {
	l, err := Layer(when, []File{{Path: "manager", Mode: 0o755, Data: []byte("bin")}})
	require.NoError(t, err)
	p := v1.Platform{OS: "linux", Architecture: "arm64"}
	img, err := Assemble(p, when, Config{User: "65532:65532", Entrypoint: []string{"/manager"}, Ports: []string{"8080/tcp"},
		Labels: map[string]string{"org.opencontainers.image.version": "0.5.0"}}, l)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "arm64", cf.Architecture)
	require.Equal(t, "linux", cf.OS)
	require.Equal(t, when, cf.Created.Time)
	require.Equal(t, "65532:65532", cf.Config.User)
	require.Equal(t, []string{"/manager"}, cf.Config.Entrypoint)
	require.Contains(t, cf.Config.ExposedPorts, "8080/tcp")
	require.Equal(t, "0.5.0", cf.Config.Labels["org.opencontainers.image.version"])
	mt, err := img.MediaType()
	require.NoError(t, err)
	require.Equal(t, types.OCIManifestSchema1, mt)

	idx, err := IndexOf([]v1.Platform{p}, []v1.Image{img})
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 1)
	require.Equal(t, "arm64", m.Manifests[0].Platform.Architecture)
	_, err = IndexOf(Platforms, []v1.Image{img})
	require.EqualError(t, err, "an index needs one image per platform, got 2 platforms and 1 images")
}

func bundleDir(t *testing.T, managerRef string) string {
	t.Helper()
	dir := t.TempDir()
	csv := map[string]any{"kind": "ClusterServiceVersion", "metadata": map[string]any{"name": "app-operator.v0.5.0",
		"annotations": map[string]any{"containerImage": managerRef}},
		"spec": map[string]any{"relatedImages": []any{map[string]any{"name": "manager", "image": managerRef}},
			"install": map[string]any{"spec": map[string]any{"deployments": []any{map[string]any{"spec": map[string]any{"template": map[string]any{
				"spec": map[string]any{"containers": []any{map[string]any{"name": "manager", "image": managerRef}, map[string]any{"name": "proxy", "image": "other:1"}}}}}}}}}}}
	raw, err := yaml.Marshal(csv)
	require.NoError(t, err)
	for path, data := range map[string]string{CSVFile: string(raw), "manifests/crd.yaml": "kind: CustomResourceDefinition\n",
		"metadata/annotations.yaml":   "annotations:\n  operators.operatorframework.io.bundle.package.v1: app-operator\n",
		"tests/scorecard/config.yaml": "kind: Configuration\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, path), []byte(data), 0o644))
	}
	return dir
}

func TestPinDigestsNamesTheManagerByDigestEverywhereAndNothingElse(t *testing.T) {
	tag := "quay.io/mycompany/app-operator:v0.5.0"
	src := bundleDir(t, tag)
	ref, err := ManagerImage(src)
	require.NoError(t, err)
	require.Equal(t, tag, ref)
	digest := v1.Hash{Algorithm: "sha256", Hex: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	pinned, err := ByDigest(ref, digest)
	require.NoError(t, err)
	require.Equal(t, "quay.io/mycompany/app-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", pinned)

	dst := filepath.Join(t.TempDir(), "bundle")
	require.NoError(t, PinDigests(src, dst, map[string]string{tag: pinned}))
	raw, err := os.ReadFile(filepath.Join(dst, CSVFile))
	require.NoError(t, err)
	require.NotContains(t, string(raw), tag)
	require.Equal(t, 3, strings.Count(string(raw), pinned), "containerImage, relatedImages and the container")
	require.Contains(t, string(raw), "other:1", "other images stay as they were")
	for _, f := range []string{"manifests/crd.yaml", "metadata/annotations.yaml", "tests/scorecard/config.yaml"} {
		a, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dst, f))
		require.NoError(t, err)
		require.Equal(t, a, b, f)
	}

	err = PinDigests(src, filepath.Join(t.TempDir(), "b"), map[string]string{"quay.io/x:1": pinned})
	require.ErrorContains(t, err, "names none of the images to pin")
}

func TestTheBundleImageHoldsTheBundleWithItsAnnotationsAsLabels(t *testing.T) {
	dir := bundleDir(t, "quay.io/mycompany/app-operator:v0.5.0")
	idx, err := Builder{Platforms: Platforms}.Bundle(dir, when)
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 2, "one image per platform")
	img, err := idx.Image(m.Manifests[0].Digest)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"operators.operatorframework.io.bundle.package.v1": "app-operator"}, cf.Config.Labels)
	layers, err := img.Layers()
	require.NoError(t, err)
	var names []string
	for _, e := range entries(t, layers[0]) {
		names = append(names, e.name)
	}
	require.Equal(t, []string{"manifests/", "manifests/app-operator.clusterserviceversion.yaml", "manifests/crd.yaml",
		"metadata/", "metadata/annotations.yaml", "tests/", "tests/scorecard/", "tests/scorecard/config.yaml"}, names)
}

func TestImagesGoToALayoutAndARegistryAndComeBackTheSame(t *testing.T) {
	ctx := context.Background()
	idx, err := Builder{Platforms: Platforms}.Bundle(bundleDir(t, "quay.io/mycompany/app-operator:v0.5.0"), when)
	require.NoError(t, err)
	built := Built{Repo: "quay.io/mycompany/app-operator-bundle", Tag: "v0.5.0", Artifact: idx}

	dir := filepath.Join(t.TempDir(), "images")
	require.NoError(t, WriteLayout(dir, []Built{built}))
	read, err := ReadLayout(dir)
	require.NoError(t, err)
	require.Len(t, read, 1)
	require.Equal(t, built.Ref(), read[0].Ref())
	want, err := built.ByDigest()
	require.NoError(t, err)
	got, err := read[0].ByDigest()
	require.NoError(t, err)
	require.Equal(t, want, got)

	reg, err := ServeRegistry("127.0.0.1:0", t.TempDir(), nil)
	require.NoError(t, err)
	defer func() { _ = reg.Close() }()
	local := Rebase([]Built{built}, reg.Addr+"/mycompany")[0]
	require.Equal(t, reg.Addr+"/mycompany/app-operator-bundle:v0.5.0", local.Ref())
	require.NoError(t, Push(ctx, []Built{local}))
	byDigest, err := local.ByDigest()
	require.NoError(t, err)
	ref, err := name.ParseReference(byDigest)
	require.NoError(t, err)
	pulled, err := remote.Index(ref, remote.WithContext(ctx))
	require.NoError(t, err)
	d, err := pulled.Digest()
	require.NoError(t, err)
	require.Equal(t, want[len(want)-71:], d.String(), "addressable by digest")
}

func TestAPushToARegistryThatCannotBeReachedNamesIt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	idx, err := Builder{Platforms: Platforms}.Bundle(bundleDir(t, "quay.io/mycompany/app-operator:v0.5.0"), when)
	require.NoError(t, err)
	err = Push(context.Background(), []Built{{Repo: addr + "/mycompany/app-operator-bundle", Tag: "v0.5.0", Artifact: idx}})
	require.ErrorContains(t, err, "pushing "+addr+"/mycompany/app-operator-bundle:v0.5.0 to registry "+addr+":")
}

func TestAPushAuthenticatesAsDockerLoginDoes(t *testing.T) {
	const user, password = "publisher", "s3cret"
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	idx, err := Builder{Platforms: Platforms}.Bundle(bundleDir(t, "quay.io/mycompany/app-operator:v0.5.0"), when)
	require.NoError(t, err)
	images := []Built{{Repo: host + "/mycompany/app-operator-bundle", Tag: "v0.5.0", Artifact: idx}}

	dockerConfig := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dockerConfig)
	require.ErrorContains(t, Push(context.Background(), images), "401", "no credentials: refused")

	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	config := `{"auths": {"` + host + `": {"auth": "` + auth + `"}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dockerConfig, "config.json"), []byte(config), 0o600))
	require.NoError(t, Push(context.Background(), images), "the credentials docker login wrote")
}

func TestRepoPathIsTheRepositoryBelowItsRegistryHost(t *testing.T) {
	for repo, want := range map[string]string{
		"quay.io/mycompany/app-operator":               "mycompany/app-operator",
		"127.0.0.1:5000/mycompany/charts/app-operator": "mycompany/charts/app-operator",
		"localcluster.local/pause":                     "pause",
	} {
		require.Equal(t, want, RepoPath(repo), repo)
	}
}

func TestCopyTreeCopiesEveryFolderAndFile(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"metadata/annotations.yaml": "a: b\n", "manifests/csv.yaml": "kind: x\n", "top.json": "{}"}
	for p, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, p), []byte(data), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(src, "empty"), 0o755))

	dst := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, CopyTree(src, dst))
	for p, data := range files {
		got, err := os.ReadFile(filepath.Join(dst, p))
		require.NoError(t, err, p)
		require.Equal(t, data, string(got), p)
	}
	info, err := os.Stat(filepath.Join(dst, "empty"))
	require.NoError(t, err)
	require.True(t, info.IsDir())
}
