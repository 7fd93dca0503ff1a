package localcluster

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeName is the name of the cluster's real node.
func (c *Cluster) NodeName() string { return c.Name + "-node" }

// NodeLabel marks the real node; fake nodes carry FakeNodeLabel instead.
const NodeLabel = "app-operator.mycompany.com/real-node"

// startKubelet runs the kubelet built from the pinned k8s.io/kubernetes, with containerd as its
// runtime, authenticating as system:node:<name> with a certificate of the cluster's CA, and
// serving on the node IP, with a certificate of the cluster's CA too, so that the API server
// reaches it for logs and exec and metrics-server for the pods' resource usage.
func (c *Cluster) startKubelet(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "kubelet")
	kubeconfig := filepath.Join(dir, "kubeconfig.yaml")
	if err := c.clientKubeconfig(kubeconfig, "system:node:"+c.NodeName(), "system:nodes"); err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	certFile, keyFile, err := c.servingCert(filepath.Join(dir, "pki"), c.NodeName(), net.ParseIP(NodeIP))
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "config.yaml")
	if err := writeFile(config, []byte(kubeletConfig(filepath.Join(c.pkiDir(), "ca.crt"), certFile, keyFile, filepath.Join(c.Dir, "pod-logs"), ports[0], ports[1]))); err != nil {
		return err
	}
	if _, err := c.Start("kubelet", filepath.Join(c.Bin, "kubelet"), []string{
		"--config=" + config, "--kubeconfig=" + kubeconfig,
		// Under RunDir: the kubelet's plugin sockets must have short paths.
		"--root-dir=" + filepath.Join(RunDir, "kubelet"), "--cert-dir=" + filepath.Join(dir, "pki"),
		"--hostname-override=" + c.NodeName(), "--node-ip=" + NodeIP,
		"--node-labels=" + NodeLabel + "=true",
	}, nil); err != nil {
		return err
	}
	return c.Poll(ctx, 2*time.Minute, "node "+c.NodeName()+" to be Ready", func(ctx context.Context) (bool, error) {
		n := &corev1.Node{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: c.NodeName()}, n); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// kubeletConfig is the KubeletConfiguration of the node. The cgroups of these machines are v1
// (cgroupfs, failCgroupV1 false); the eviction thresholds are low, so that a busy test machine's
// disk does not evict the pods under test.
func kubeletConfig(clientCA, tlsCert, tlsKey, podLogs string, port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
tlsCertFile: %s
tlsPrivateKeyFile: %s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS:
- %s
resolvConf: /etc/resolv.conf
podLogsDir: %s
serializeImagePulls: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 110
`, NodeIP, port, tlsCert, tlsKey, healthzPort, containerdSocket, clientCA, DNSServiceIP, podLogs)
}
