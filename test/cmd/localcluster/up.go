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

// start brings up the control plane, the egress proxy and OLM, replacing any earlier local
// cluster.
func start(ctx context.Context, root, dir, bin string) (*localcluster.Cluster, error) {
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig.yaml")); err == nil {
		step("stopping the previous local cluster")
		_ = localcluster.Down(dir, clusterName, bin)
	}
	_ = os.RemoveAll(dir)
	step("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok")
	c, err := localcluster.StartCluster(ctx, localcluster.Options{Name: clusterName, Dir: dir, Bin: bin})
	if err != nil {
		return nil, err
	}
	if _, err := c.Start("egress", filepath.Join(bin, "localcluster"), []string{"egress"}, nil); err != nil {
		return nil, err
	}
	step("installing OLM (olm and catalog operators)")
	if err := c.InstallOLM(ctx, root); err != nil {
		return nil, err
	}
	return c, nil
}

// install subscribes to the catalog's stable channel and runs the manager of the installed
// release as OLM's Deployment describes it.
func install(ctx context.Context, c *localcluster.Cluster, root, bin, csv string) error {
	step("subscribing to channel %s; waiting for OLM to install %s", localcluster.Channel, csv)
	if err := c.Subscribe(ctx, localcluster.Subscription{}); err != nil {
		return err
	}
	if _, err := c.WaitForCSV(ctx, csv, 3*time.Minute); err != nil {
		return err
	}
	if err := c.WaitForConversionWebhook(ctx); err != nil {
		return err
	}
	manager, err := localcluster.ManagerFor(ctx, root, bin, csv)
	if err != nil {
		return err
	}
	step("ClusterServiceVersion %s Succeeded; running its manager %s", csv, manager)
	_, err = c.RunOperator(ctx, "manager", manager)
	return err
}

func up(ctx context.Context, root, dir, bin, samplePath string) error {
	c, err := start(ctx, root, dir, bin)
	if err != nil {
		return err
	}
	catalog := filepath.Join(root, "catalog")
	step("serving %s with opm", catalog)
	if err := c.ServeCatalog(ctx, catalog); err != nil {
		return err
	}
	head, err := localcluster.ChannelHead(catalog)
	if err != nil {
		return err
	}
	if err := install(ctx, c, root, bin, head); err != nil {
		return err
	}
	return createSample(ctx, c, samplePath)
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
	step("creating App %s/%s and waiting until it is Available", app.Namespace, app.Name)
	if err := c.Client.Create(ctx, app); err != nil {
		return err
	}
	if err := c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), 2*time.Minute); err != nil {
		return err
	}
	out, err := exec.Command(filepath.Join(c.Bin, "kubectl"), "--kubeconfig", c.Kubeconfig, "get", "apps", "-A").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl get apps: %w: %s", err, out)
	}
	fmt.Printf("\n$ kubectl get apps -A\n%s\n", out)
	fmt.Printf("The cluster keeps running. Point kubectl at it with:\n\n  export KUBECONFIG=%s\n  export PATH=%s:$PATH\n  kubectl get apps,deployments,services,pods -A\n\nLogs of every component: %s\nStop everything with: make demo-down\n",
		c.Kubeconfig, c.Bin, c.LogDir())
	return nil
}
