package localcluster

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The real node's network: one Linux bridge that the harness creates, holding the node's IP and
// the gateway of its pod network. The CNI bridge plugin attaches every pod to it; the API
// server and the kubelet listen on the node IP, so pods reach the API server through the
// kubernetes Service and the API server reaches webhooks through theirs (kube-proxy's rules).
// Only one local cluster with a real node runs on a machine at a time.
const (
	// Bridge is the node's bridge.
	Bridge = "appop0"
	// NodeIP is the node's address, on Bridge.
	NodeIP = "10.244.0.1"
	// PodCIDR holds the node's pods; it is clear of the Service range (10.96.0.0/16) and of
	// the fake nodes' pod ranges (10.128.0.0/16 and up).
	PodCIDR = "10.244.0.0/24"
	// ServiceCIDR is the cluster's Service range; KubernetesServiceIP its first address, the
	// kubernetes Service; DNSServiceIP the cluster DNS Service.
	ServiceCIDR         = "10.96.0.0/16"
	KubernetesServiceIP = "10.96.0.1"
	DNSServiceIP        = "10.96.0.10"
	// RunDir holds the node's sockets and runtime state; unix socket paths must stay short.
	RunDir = "/run/app-operator"
)

// ownerFile records which cluster directory the machine's real node belongs to.
var ownerFile = filepath.Join(RunDir, "owner")

// claimHost makes this machine's real node the cluster's, or says which cluster has it.
func claimHost(dir string) error {
	if owner, err := os.ReadFile(ownerFile); err == nil && string(owner) != dir {
		if _, err := os.Stat(string(owner)); err == nil {
			return fmt.Errorf("the local cluster in %s runs a real node on this machine; stop it first (make demo-down, or its test's end)", owner)
		}
	}
	if err := os.MkdirAll(RunDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(ownerFile, []byte(dir), 0o644)
}

func releaseHost(dir string) {
	if owner, err := os.ReadFile(ownerFile); err == nil && string(owner) == dir {
		_ = os.Remove(ownerFile)
	}
}

// hostNetwork creates the node's bridge with its address and lets the host forward pods'
// traffic; stopNode undoes both.
func hostNetwork() error {
	if _, err := net.InterfaceByName(Bridge); err == nil {
		if err := run("ip", "link", "del", Bridge); err != nil {
			return fmt.Errorf("removing the bridge %s left by an earlier cluster: %w", Bridge, err)
		}
	}
	for _, args := range [][]string{
		{"ip", "link", "add", Bridge, "type", "bridge"},
		{"ip", "addr", "add", NodeIP + "/24", "dev", Bridge},
		{"ip", "link", "set", Bridge, "up"},
	} {
		if err := run(args[0], args[1:]...); err != nil {
			return err
		}
	}
	return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644)
}

// ownsHost reports whether the machine's real node is the cluster's, or no cluster's.
func ownsHost(dir string) bool {
	owner, err := os.ReadFile(ownerFile)
	return err != nil || string(owner) == dir
}

// run runs a command and says what it printed when it fails.
func run(name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
