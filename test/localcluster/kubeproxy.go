package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// startKubeProxy runs kube-proxy in iptables mode, authenticating as system:kube-proxy: it
// routes every Service's ClusterIP, from pods and from this host's processes (the API server
// calling webhooks), to the Service's endpoints. It leaves the machine's conntrack settings as
// they are.
func (c *Cluster) startKubeProxy(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "kube-proxy")
	kubeconfig := filepath.Join(dir, "kubeconfig.yaml")
	if err := c.clientKubeconfig(kubeconfig, "system:kube-proxy"); err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "config.yaml")
	if err := writeFile(config, []byte(fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: %s
bindAddress: %s
clientConnection:
  kubeconfig: %s
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
nodePortAddresses:
- %s/32
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, c.NodeName(), NodeIP, kubeconfig, PodCIDR, ports[0], ports[1], NodeIP))); err != nil {
		return err
	}
	if _, err := c.Start("kube-proxy", filepath.Join(c.Bin, "kube-proxy"), []string{"--config=" + config}, nil); err != nil {
		return err
	}
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[0])
	return c.Poll(ctx, time.Minute, "kube-proxy to program the node's Services", func(context.Context) (bool, error) {
		resp, err := http.Get(healthz)
		if err != nil {
			return false, nil //nolint:nilerr // not serving yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
