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
// they are, and refuses what it has not routed (refuseUnroutedServiceTraffic).
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
	if err := refuseUnroutedServiceTraffic(); err != nil {
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

// refuseUnroutedServiceTraffic refuses traffic to the Service range that kube-proxy has not
// routed to an endpoint (rewritten, DNAT). A real node has no route to the Service range
// without kube-proxy; this machine's default route answers any address, so a connection to a
// Service made before kube-proxy wrote its rules (the aggregator dialing metrics-server, the
// API server a webhook) would reach the machine's gateway and stay open there. Refused, it is
// made again, through kube-proxy. The cluster's teardown restores the machine's rules.
func refuseUnroutedServiceTraffic() error {
	for _, chain := range []string{"OUTPUT", "FORWARD"} {
		for _, rule := range [][]string{
			{"-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"}, // also ends connections made before
			{"-j", "REJECT"},
		} {
			args := append([]string{"-A", chain, "-d", ServiceCIDR, "-m", "conntrack", "!", "--ctstate", "DNAT"}, rule...)
			if err := run("iptables", args...); err != nil {
				return err
			}
		}
	}
	return nil
}
