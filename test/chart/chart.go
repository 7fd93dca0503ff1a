// Package chart renders, lints, pulls and installs App Operator's Helm chart
// (charts/app-operator) with Helm's own library, as the helm command does.
package chart

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	"helm.sh/helm/v4/pkg/registry"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/mycompany/app-operator/internal/release/bundle"
	"github.com/mycompany/app-operator/internal/release/publish"
	"github.com/mycompany/app-operator/test/localcluster"
)

// KubeVersion is the Kubernetes the chart is rendered for without a cluster: the local
// cluster's.
var KubeVersion = &chartcommon.KubeVersion{Version: "v1.34.4", Major: "1", Minor: "34"}

// Dir is the chart's folder.
func Dir() string {
	return filepath.Join(localcluster.RepoRoot(), filepath.FromSlash(publish.ChartDir))
}

// Load loads the chart from its folder.
func Load() (*chartv2.Chart, error) { return loader.Load(Dir()) }

// Lint lints the chart with vals, as helm lint --strict does, and returns every message it
// prints: its recommendations (INFO), warnings and errors.
func Lint(vals map[string]any) []string {
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = "app-operator-system"
	lint.KubeVersion = KubeVersion
	res := lint.Run([]string{Dir()}, vals)
	var out []string
	for _, m := range res.Messages {
		if m.Severity >= support.InfoSev {
			out = append(out, m.Error())
		}
	}
	for _, err := range res.Errors {
		out = append(out, err.Error())
	}
	return out
}

// Render renders the chart with vals into namespace, as helm template does, and returns its
// objects and its NOTES.
func Render(vals map[string]any, namespace string) ([]*unstructured.Unstructured, string, error) {
	ch, err := Load()
	if err != nil {
		return nil, "", err
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartcommon.DefaultCapabilities,
	}
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = "app-operator"
	install.Namespace = namespace
	install.KubeVersion = KubeVersion
	r, err := install.Run(ch, vals)
	if err != nil {
		return nil, "", err
	}
	rel := r.(*release.Release)
	objs, err := bundle.Decode(bytes.NewBufferString(rel.Manifest))
	return objs, rel.Info.Notes, err
}

// Pull pulls version of the chart from repo in an OCI registry that speaks plain HTTP, such as
// 127.0.0.1:5000/mycompany/charts/app-operator, as helm pull oci://<repo> --version <version>
// --plain-http does, and loads it.
func Pull(repo, version string) (*chartv2.Chart, error) {
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptWriter(io.Discard))
	if err != nil {
		return nil, err
	}
	res, err := rc.Pull(repo + ":" + publish.ChartTag(version))
	if err != nil {
		return nil, fmt.Errorf("pulling the chart oci://%s --version %s: %w", repo, version, err)
	}
	return loader.LoadArchive(bytes.NewReader(res.Chart.Data))
}

// Helm runs Helm's actions against the cluster of a kubeconfig, in one namespace, storing
// releases in Secrets there, as the helm command does.
type Helm struct {
	cfg       *action.Configuration
	namespace string
	chart     *chartv2.Chart
}

// ForCluster returns Helm for the cluster of kubeconfig and namespace, installing and
// upgrading to chart ch.
func ForCluster(kubeconfig, namespace string, ch *chartv2.Chart) (*Helm, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.Namespace = &namespace
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		return nil, err
	}
	return &Helm{cfg: cfg, namespace: namespace, chart: ch}, nil
}

// Install installs the chart as release name, and waits until every object it made is ready.
func (h *Helm) Install(ctx context.Context, name string, vals map[string]any, timeout time.Duration) (*release.Release, error) {
	install := action.NewInstall(h.cfg)
	install.ReleaseName = name
	install.Namespace = h.namespace
	install.CreateNamespace = true
	install.WaitStrategy = kube.StatusWatcherStrategy
	install.Timeout = timeout
	r, err := install.RunWithContext(ctx, h.chart, vals)
	return asRelease(r, err)
}

// Upgrade upgrades release name to the chart with vals, and waits until it is ready.
func (h *Helm) Upgrade(ctx context.Context, name string, vals map[string]any, timeout time.Duration) (*release.Release, error) {
	upgrade := action.NewUpgrade(h.cfg)
	upgrade.Namespace = h.namespace
	upgrade.WaitStrategy = kube.StatusWatcherStrategy
	upgrade.Timeout = timeout
	r, err := upgrade.RunWithContext(ctx, name, h.chart, vals)
	return asRelease(r, err)
}

// Rollback rolls release name back to revision, and waits until it is ready.
func (h *Helm) Rollback(name string, revision int, timeout time.Duration) error {
	rollback := action.NewRollback(h.cfg)
	rollback.Version = revision
	rollback.WaitStrategy = kube.StatusWatcherStrategy
	rollback.Timeout = timeout
	return rollback.Run(name)
}

// Uninstall uninstalls release name, and waits until what it deleted is gone.
func (h *Helm) Uninstall(name string, timeout time.Duration) error {
	uninstall := action.NewUninstall(h.cfg)
	uninstall.WaitStrategy = kube.StatusWatcherStrategy
	uninstall.Timeout = timeout
	_, err := uninstall.Run(name)
	return err
}

// Values returns the values release name was last installed or upgraded with, the chart's
// defaults included.
func (h *Helm) Values(name string) (map[string]any, error) {
	get := action.NewGetValues(h.cfg)
	get.AllValues = true
	return get.Run(name)
}

func asRelease(r any, err error) (*release.Release, error) {
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a %T, not a release", r)
	}
	return rel, nil
}
