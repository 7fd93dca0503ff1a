package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

// start brings up the cluster, its node and OLM, replacing any earlier local cluster, and builds
// the images of every release.
func start(ctx context.Context, root, dir, bin string) (*localcluster.Cluster, *localcluster.Releases, error) {
	if _, err := os.Stat(filepath.Join(dir, "kwokctl.yaml")); err == nil {
		step("stopping the previous local cluster")
		_ = localcluster.Down(dir, clusterName, bin)
	}
	_ = os.RemoveAll(dir)
	step("building the images of every release (each cut release from its commit; the first time takes minutes)")
	rel, err := localcluster.BuildReleases(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	step("starting the loopback registry, etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, and the real node (containerd, kubelet, kube-proxy, CoreDNS)")
	c, err := localcluster.StartCluster(ctx, localcluster.Options{Name: clusterName, Dir: dir, Bin: bin})
	if err != nil {
		return nil, nil, err
	}
	step("installing OLM (its olm and catalog operators run on the node)")
	if err := c.InstallOLM(ctx, root); err != nil {
		return nil, nil, err
	}
	return c, rel, nil
}

// install subscribes to the catalog's default channel and waits until OLM has installed csv
// and its manager runs.
func install(ctx context.Context, c *localcluster.Cluster, csv string) error {
	step("subscribing to channel %s; waiting for OLM to install %s", localcluster.Channel, csv)
	if err := c.Subscribe(ctx, localcluster.Subscription{}); err != nil {
		return err
	}
	if _, err := c.WaitForCSV(ctx, csv, 5*time.Minute); err != nil {
		return err
	}
	if _, err := c.WaitForManager(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	return c.WaitForCRD(ctx)
}

func up(ctx context.Context, root, dir, bin, samplePath string) error {
	c, rel, err := start(ctx, root, dir, bin)
	if err != nil {
		return err
	}
	head := rel.Head()
	step("publishing App Operator's catalog image (releases up to %s) from the loopback registry", head.Version)
	if err := c.PublishCatalog(ctx, rel, head.Version); err != nil {
		return err
	}
	if err := install(ctx, c, head.CSVName()); err != nil {
		return err
	}
	if err := createSample(ctx, c, samplePath); err != nil {
		return err
	}
	for _, args := range [][]string{{"get", "apps", "-A"}, {"get", "pods", "-A", "-o", "wide"}} {
		out, err := exec.Command(filepath.Join(c.Bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl %v: %w: %s", args, err, out)
		}
		fmt.Printf("\n$ kubectl %s\n%s", joinArgs(args), out)
	}
	fmt.Printf("\nThe cluster keeps running. Point kubectl at it with:\n\n  export KUBECONFIG=%s\n  export PATH=%s:$PATH\n  kubectl get apps,deployments,services,pods -A\n\nLogs of every component: %s\nStop everything with: make demo-down\n",
		c.Kubeconfig, c.Bin, c.LogDir())
	return nil
}

func createSample(ctx context.Context, c *localcluster.Cluster, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	app := &appv1.App{}
	if err := yaml.UnmarshalStrict(raw, app); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	app.Namespace = "default"
	step("creating App %s/%s (image %s) and waiting until its pods are ready on the node", app.Namespace, app.Name, app.Spec.Image)
	if err := c.Client.Create(ctx, app); err != nil {
		return err
	}
	return c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), 3*time.Minute)
}

func joinArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}
