package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// HostState is what a local cluster changes on the machine: network interfaces, mounts and
// iptables chains and rules. Taken before a cluster starts and after it stops, the two must be
// equal.
type HostState struct {
	Links  []string
	Mounts []string
	// Chains are the iptables and ip6tables chains a program created (not the built-in ones,
	// which a table has as soon as anything used it), as family/table/chain, and every rule,
	// as family/table/rule.
	Chains []string
}

// TakeHostState reads the machine's interfaces, mounts and iptables chains.
func TakeHostState() (HostState, error) {
	var s HostState
	ifaces, err := net.Interfaces()
	if err != nil {
		return s, err
	}
	for _, i := range ifaces {
		s.Links = append(s.Links, i.Name)
	}
	mounts, err := mountPoints()
	if err != nil {
		return s, err
	}
	s.Mounts = mounts
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		if _, err := exec.LookPath(save); err != nil {
			continue // no iptables yet: no chains
		}
		out, err := exec.Command(save).Output()
		if err != nil {
			return s, fmt.Errorf("%s: %w", save, err)
		}
		table := ""
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(line, "*"):
				table = strings.TrimPrefix(line, "*")
			case strings.HasPrefix(line, ":"):
				if f := strings.Fields(line[1:]); len(f) > 1 && f[1] == "-" {
					s.Chains = append(s.Chains, save[:strings.Index(save, "-")]+"/"+table+"/"+f[0])
				}
			case strings.HasPrefix(line, "-A "):
				s.Chains = append(s.Chains, save[:strings.Index(save, "-")]+"/"+table+"/"+line)
			}
		}
	}
	sort.Strings(s.Links)
	sort.Strings(s.Chains)
	return s, nil
}

// mountPoints lists the mount points of this machine, deepest last.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	sort.Strings(out)
	return out, sc.Err()
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// Diff says what differs between two states, or "" when nothing does.
func (s HostState) Diff(after HostState) string {
	var out []string
	for _, d := range []struct {
		what          string
		before, after []string
	}{{"interfaces", s.Links, after.Links}, {"mounts", s.Mounts, after.Mounts}, {"iptables chains and rules", s.Chains, after.Chains}} {
		added, removed := setDiff(d.before, d.after), setDiff(d.after, d.before)
		if len(added) > 0 {
			out = append(out, fmt.Sprintf("%s left behind: %v", d.what, added))
		}
		if len(removed) > 0 {
			out = append(out, fmt.Sprintf("%s removed: %v", d.what, removed))
		}
	}
	return strings.Join(out, "; ")
}

func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	var out []string
	for _, x := range b {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

// The files of a cluster's directory that its teardown reads, written when it starts.
const (
	iptablesBefore  = "iptables-before.rules"
	ip6tablesBefore = "ip6tables-before.rules"
	forwardBefore   = "ip-forward-before"
)

// saveHost records what the node's teardown restores: the iptables rules and IP forwarding.
func saveHost(dir string) error {
	for file, save := range map[string]string{iptablesBefore: "iptables-save", ip6tablesBefore: "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			return fmt.Errorf("%s: %w", save, err)
		}
		if err := writeFile(filepath.Join(dir, file), out); err != nil {
			return err
		}
	}
	forward, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		return err
	}
	for i, d := range createdDirs {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			if err := writeFile(filepath.Join(dir, fmt.Sprintf("created-%d", i)), []byte(d)); err != nil {
				return err
			}
		}
	}
	return writeFile(filepath.Join(dir, forwardBefore), forward)
}

// createdDirs are the machine's directories the node makes when they are missing: the CNI
// library's cache, and where containerd keeps the pods' network namespaces. The teardown
// removes those it made (created-<i> in the cluster's directory records them).
var createdDirs = []string{"/var/lib/cni", "/run/netns"}

// stopNode stops the real node of a cluster directory and undoes what it did to the machine:
// every pod sandbox is removed through the CRI (which takes each pod's network down), then the
// kubelet, kube-proxy (whose --cleanup removes its rules) and containerd stop, the iptables
// rules the kubelet and the CNI plugins left are restored to what they were, the mounts under
// the cluster's directories are unmounted, the kubelet's cgroups removed, and the bridge
// deleted. It works from another process too (make demo-down).
func stopNode(dir, bin string) error {
	if !ownsHost(dir) {
		return nil // another cluster's node: not this one's to stop
	}
	var errs []error
	// The kubelet first, or it would start again the pods removed under it.
	stopRecorded(dir, "kubelet", 10*time.Second)
	if err := removeSandboxes(); err != nil {
		errs = append(errs, err)
	}
	for _, name := range []string{"kube-proxy", "containerd"} {
		stopRecorded(dir, name, 10*time.Second)
	}
	killShims()
	if _, err := os.Stat(filepath.Join(bin, "kube-proxy")); err == nil {
		_ = exec.Command(filepath.Join(bin, "kube-proxy"), "--cleanup").Run()
	}
	for file, restore := range map[string]string{iptablesBefore: "iptables-restore", ip6tablesBefore: "ip6tables-restore"} {
		if raw, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
			if err := restoreRules(restore, string(raw)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := unmountUnder(dir, RunDir, "/run/netns/cni-"); err != nil {
		errs = append(errs, err)
	}
	removeCgroups()
	if _, err := net.InterfaceByName(Bridge); err == nil {
		if err := run("ip", "link", "del", Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	if forward, err := os.ReadFile(filepath.Join(dir, forwardBefore)); err == nil {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", forward, 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	for i, d := range createdDirs {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("created-%d", i))); err == nil {
			_ = os.RemoveAll(d)
		}
	}
	releaseHost(dir)
	_ = os.RemoveAll(RunDir)
	return errors.Join(errs...)
}

// removeSandboxes stops and removes every pod sandbox containerd runs for the CRI.
func removeSandboxes() error {
	if _, err := os.Stat(containerdSocket); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+containerdSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing the node's pods: %w", err)
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod %s/%s: %w", sb.Metadata.Namespace, sb.Metadata.Name, err))
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s/%s: %w", sb.Metadata.Namespace, sb.Metadata.Name, err))
		}
	}
	return errors.Join(errs...)
}

// stopRecorded asks a process the cluster recorded to end, and kills it after grace.
func stopRecorded(dir, name string, grace time.Duration) {
	pid, ok := recordedPid(dir, name)
	if !ok {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// killShims ends containerd's shims of this node, which outlive containerd by design.
func killShims() {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(raw), containerdSocket) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/cmdline", &pid); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// restoreRules puts iptables back as saved, for each table it has now: a table that was empty
// before is flushed.
func restoreRules(restore, saved string) error {
	save := strings.Replace(restore, "-restore", "-save", 1)
	now, err := exec.Command(save).Output()
	if err != nil {
		return fmt.Errorf("%s: %w", save, err)
	}
	var rules strings.Builder
	rules.WriteString(saved)
	for _, line := range strings.Split(string(now), "\n") {
		if table, ok := strings.CutPrefix(line, "*"); ok && !strings.Contains(saved, "*"+table+"\n") {
			fmt.Fprintf(&rules, "*%s\n%sCOMMIT\n", table, builtinChains(string(now), table))
		}
	}
	cmd := exec.Command(restore)
	cmd.Stdin = strings.NewReader(rules.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", restore, err, out)
	}
	return nil
}

// builtinChains declares a table's built-in chains (those with a policy), emptied.
func builtinChains(saved, table string) string {
	var out strings.Builder
	in := false
	for _, line := range strings.Split(saved, "\n") {
		switch {
		case line == "*"+table:
			in = true
		case line == "COMMIT":
			in = false
		case in && strings.HasPrefix(line, ":"):
			if f := strings.Fields(line); len(f) > 1 && f[1] != "-" {
				fmt.Fprintf(&out, "%s %s [0:0]\n", f[0], f[1])
			}
		}
	}
	return out.String()
}

// unmountUnder unmounts every mount point under the given prefixes, deepest first.
func unmountUnder(prefixes ...string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		for _, p := range prefixes {
			if strings.HasPrefix(mounts[i], p) {
				if err := syscall.Unmount(mounts[i], syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", mounts[i], err))
				}
				break
			}
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubelet's cgroups (kubepods), deepest first, in every hierarchy,
// ending first any process a container left in them.
func removeCgroups() {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods*")
	var dirs []string
	for _, root := range roots {
		_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	killed := false
	for _, d := range dirs {
		raw, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, field := range strings.Fields(string(raw)) {
			var pid int
			if _, err := fmt.Sscan(field, &pid); err == nil && pid > 1 {
				killed = syscall.Kill(pid, syscall.SIGKILL) == nil || killed
			}
		}
	}
	if killed {
		time.Sleep(500 * time.Millisecond)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = syscall.Rmdir(dirs[i])
	}
}
