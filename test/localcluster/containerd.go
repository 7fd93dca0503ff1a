package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// containerd runs the node's containers with runc; Debian's packages provide both (and the CNI
// plugins). Its state is the cluster's: root under the cluster's directory, sockets and runc's
// state under RunDir.
const (
	containerdSocket = RunDir + "/containerd.sock"
	cniBinDir        = "/usr/lib/cni"
	// RegistryHosts are the registries the node pulls from: App Operator's images under
	// quay.io, and the local cluster's own (pause, OLM, opm, CoreDNS) under localcluster.local.
	// Both are served by the cluster's loopback registry.
	LocalImageHost = "localcluster.local"
)

// RegistryHosts are the registries whose images the node pulls from the loopback registry.
var RegistryHosts = []string{"quay.io", LocalImageHost}

// PauseImage is the sandbox image of every pod.
const PauseImage = LocalImageHost + "/pause:3.10"

func (c *Cluster) containerdDir() string { return filepath.Join(c.Dir, "containerd") }
func (c *Cluster) cniConfDir() string    { return filepath.Join(c.Dir, "cni", "net.d") }

// startContainerd writes containerd's configuration, the CNI network and the registry hosts,
// and starts containerd.
func (c *Cluster) startContainerd(ctx context.Context) error {
	for _, bin := range []string{"containerd", "runc", filepath.Join(cniBinDir, "bridge"), "iptables"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is missing: the real node needs Debian's containerd, runc, containernetworking-plugins and iptables (make node-packages installs them)", bin)
		}
	}
	dir := c.containerdDir()
	for host := range hostsFiles(c.Registry) {
		if err := writeFile(filepath.Join(dir, "certs.d", host, "hosts.toml"), []byte(hostsFiles(c.Registry)[host])); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(c.cniConfDir(), "10-app-operator.conflist"), []byte(cniConfig(filepath.Join(c.Dir, "cni", "ipam")))); err != nil {
		return err
	}
	config := filepath.Join(dir, "config.toml")
	if err := writeFile(config, []byte(containerdConfig(dir, c.cniConfDir()))); err != nil {
		return err
	}
	if _, err := c.Start("containerd", "containerd", []string{"--config", config}, nil); err != nil {
		return err
	}
	return c.Poll(ctx, time.Minute, "containerd to serve on "+containerdSocket, func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("unix", containerdSocket, time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil, nil
	})
}

// hostsFiles send every pull of RegistryHosts to the loopback registry at addr, over plain
// HTTP, and nowhere else: as a mirror does for a cluster without a way out.
func hostsFiles(addr string) map[string]string {
	files := map[string]string{}
	for _, host := range RegistryHosts {
		files[host] = fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", addr, addr)
	}
	return files
}

func containerdConfig(dir, cniConfDir string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # These machines lack CAP_SYS_RESOURCE: without it, every sandbox fails to start.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, filepath.Join(dir, "root"), filepath.Join(RunDir, "containerd"), containerdSocket, containerdSocket+".ttrpc",
		filepath.Join(dir, "opt"), PauseImage, filepath.Join(RunDir, "runc"), cniBinDir, cniConfDir, filepath.Join(dir, "certs.d"))
}

// cniConfig attaches each pod to the node's bridge with an address of PodCIDR, masquerades
// what pods send off the node, and maps host ports.
func cniConfig(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "app-operator",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "rangeStart": "10.244.0.10", "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, Bridge, PodCIDR, NodeIP, ipamDir)
}

// writeFile writes a file, making its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
