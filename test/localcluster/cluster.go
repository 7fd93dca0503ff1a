package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/mycompany/app-operator/internal/operator"
)

// Options describe a local cluster.
type Options struct {
	// Name names the cluster; kwokctl prefixes its processes with it, and the real node is
	// <Name>-node.
	Name string
	// Dir holds everything of the cluster: kubeconfig, logs, pids, certificates, the node's
	// state.
	Dir string
	// Bin is the directory of the tools built from hack/tools (bin/).
	Bin string
	// FakeNodes is the number of kwok's fake nodes; each holds PodsPerNode pods.
	FakeNodes, PodsPerNode int
	// AuditPolicy, when set, is the path of an audit policy for the API server, which then
	// writes the audit log at AuditLog().
	AuditPolicy string
}

// Cluster is a running local cluster.
type Cluster struct {
	Options
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig string
	// Config is the admin configuration.
	Config *rest.Config
	// Client is an admin client knowing the operator's, the CRD and OLM's types; Clientset
	// reaches subresources such as pods' logs.
	Client    client.Client
	Clientset kubernetes.Interface
	// Registry is the address of the cluster's loopback registry, host:port.
	Registry string

	processes     []*Process
	subscriptions int
}

// Scheme knows the operator's types, CustomResourceDefinitions and OLM's types.
func Scheme() *runtime.Scheme {
	s := operator.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	return s
}

// FakeNodeTaint keeps pods off kwok's fake nodes unless they tolerate it: what must really run
// lands on the real node, and Apps choose the fake nodes through their tolerations and node
// selector (OnFakeNodes).
var FakeNodeTaint = corev1.Taint{Key: "kwok.x-k8s.io/node", Value: "fake", Effect: corev1.TaintEffectNoSchedule}

// FakeNodeLabel marks kwok's fake nodes.
const FakeNodeLabel = "type"

// StartCluster starts a local cluster: a loopback registry; etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, started by kwokctl's binary runtime, with
// kwok's fake nodes; and one real node (containerd, the kubelet, kube-proxy, CoreDNS,
// metrics-server) on a bridge of its own. On failure it stops what it started.
func StartCluster(ctx context.Context, o Options) (*Cluster, error) {
	if o.FakeNodes == 0 {
		o.FakeNodes = 2
	}
	if o.PodsPerNode == 0 {
		o.PodsPerNode = 1000
	}
	for _, tool := range []string{"kwokctl", "kwok", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kubectl",
		"kubelet", "kube-proxy", "metrics-server", metricsServerManifest, "localcluster"} {
		if _, err := os.Stat(filepath.Join(o.Bin, tool)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run make tools localcluster", tool, o.Bin)
		}
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Options: o, Kubeconfig: filepath.Join(o.Dir, "kubeconfig.yaml")}
	if err := claimHost(o.Dir); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	if err := saveHost(c.Dir); err != nil {
		return err
	}
	if err := hostNetwork(); err != nil {
		return err
	}
	if err := c.startRegistry(ctx); err != nil {
		return err
	}
	config, err := c.kwokctlConfig()
	if err != nil {
		return err
	}
	if err := c.kwokctl(ctx, "create", "cluster", "--config", config, "--kubeconfig", c.Kubeconfig, "--timeout", "2m"); err != nil {
		return err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	if c.Client, err = client.New(c.Config, client.Options{Scheme: Scheme()}); err != nil {
		return err
	}
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	for _, step := range []func(context.Context) error{c.createFakeNodes, c.startContainerd, c.pushInfraImages, c.startKubelet,
		c.startKubeProxy, c.installDNS, c.installMetricsServer} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// startRegistry starts the cluster's loopback registry as a process of its own, so that it
// outlives the command that started the cluster (make demo).
func (c *Cluster) startRegistry(ctx context.Context) error {
	addrFile := filepath.Join(c.Dir, "registry-addr")
	if _, err := c.Start("registry", filepath.Join(c.Bin, "localcluster"), []string{"registry", "--dir", filepath.Join(c.Dir, "registry"),
		"--addr-file", addrFile}, nil); err != nil {
		return err
	}
	return c.Poll(ctx, 30*time.Second, "the loopback registry to serve", func(context.Context) (bool, error) {
		addr, err := os.ReadFile(addrFile)
		if err != nil {
			return false, nil //nolint:nilerr // not written yet
		}
		c.Registry = strings.TrimSpace(string(addr))
		return c.Registry != "", nil
	})
}

// kwokctlConfig writes the kwokctl configuration: the binaries built here, fixed ports, wide
// Service and pod ranges, no client rate limits; the API server listens on the node IP too,
// with it and the kubernetes Service in its certificate, reaches kubelets with the admin
// certificate, and vouches for its users to aggregated APIs (metrics-server) as a front proxy;
// HorizontalPodAutoscalers scale down after DownscaleStabilization; kwok manages only the fake
// nodes.
func (c *Cluster) kwokctlConfig() (string, error) {
	ports, err := freePorts(6)
	if err != nil {
		return "", err
	}
	apiserverPort := ports[0]
	if l, err := net.Listen("tcp", ":6443"); err == nil { // the port OLM's policies for unpack Jobs allow
		l.Close()
		apiserverPort = 6443
	}
	pki := c.pkiDir()
	bin := func(name string) string { return filepath.Join(c.Bin, name) }
	cfg := fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  runtime: binary
  bindAddress: 127.0.0.1
  kubeApiserverPort: %d
  kubeApiserverCertSANs:
  - %s
  - %s
  etcdPort: %d
  etcdPeerPort: %d
  kwokControllerPort: %d
  kubeControllerManagerPort: %d
  kubeSchedulerPort: %d
  kubeApiserverBinary: %s
  kubeControllerManagerBinary: %s
  kubeSchedulerBinary: %s
  kwokControllerBinary: %s
  etcdBinary: %s
  kubectlBinary: %s
  disableQPSLimits: true
  kubeAuditPolicy: "%s"
componentsPatches:
- name: kube-apiserver
  extraArgs:
  - key: bind-address
    value: 0.0.0.0
    override: true
  - key: advertise-address
    value: %s
  - key: service-cluster-ip-range
    value: %s
  - key: kubelet-client-certificate
    value: %s
  - key: kubelet-client-key
    value: %s
  - key: kubelet-preferred-address-types
    value: InternalIP,Hostname
  - key: requestheader-client-ca-file
    value: %s
  - key: requestheader-username-headers
    value: X-Remote-User
  - key: requestheader-group-headers
    value: X-Remote-Group
  - key: requestheader-extra-headers-prefix
    value: X-Remote-Extra-
  # The audit log is read from an offset (make bench): rotating it at its default 100 MB would
  # lose the requests logged before the rotation. This API server's 0 means that default too,
  # so the limit is 1 TiB.
  - key: audit-log-maxsize
    value: "1048576"
- name: kube-controller-manager
  extraArgs:
  - key: service-cluster-ip-range
    value: %s
  - key: horizontal-pod-autoscaler-downscale-stabilization
    value: %s
- name: kwok-controller
  extraArgs:
  - key: manage-all-nodes
    value: "false"
    override: true
  - key: manage-nodes-with-annotation-selector
    value: kwok.x-k8s.io/node=fake
`, apiserverPort, KubernetesServiceIP, NodeIP, ports[1], ports[2], ports[3], ports[4], ports[5],
		bin("kube-apiserver"), bin("kube-controller-manager"), bin("kube-scheduler"), bin("kwok"), bin("etcd"), bin("kubectl"),
		c.AuditPolicy, NodeIP, ServiceCIDR, filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"), filepath.Join(pki, "ca.crt"),
		ServiceCIDR, DownscaleStabilization)
	path := filepath.Join(c.Dir, "kwokctl.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

func (c *Cluster) kwokctl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "kwokctl"), append([]string{"--name", c.Name}, args...)...)
	cmd.Env = append(environWithout("CI"), "KWOK_WORKDIR="+filepath.Join(c.Dir, "kwok"),
		"PATH="+c.Bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// createFakeNodes creates kwok's fake nodes, tainted so that only what chooses them lands
// there. Each gets a pod range of its own, wide enough for PodsPerNode pods.
func (c *Cluster) createFakeNodes(ctx context.Context) error {
	pods := resource.MustParse(fmt.Sprint(c.PodsPerNode))
	for i := range c.FakeNodes {
		cidr := fmt.Sprintf("10.%d.0.0/16", 128+i)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("kwok-node-%d", i),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("kwok-node-%d", i), "kubernetes.io/os": "linux",
					"kubernetes.io/arch": "amd64", FakeNodeLabel: "kwok"},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}, Taints: []corev1.Taint{FakeNodeTaint}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
			},
		}
		if err := c.Client.Create(ctx, n); err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// Connect returns the cluster a directory holds, started earlier by another process.
func Connect(dir, name, bin string) (*Cluster, error) {
	c := &Cluster{Options: Options{Name: name, Dir: dir, Bin: bin}, Kubeconfig: filepath.Join(dir, "kubeconfig.yaml")}
	addr, err := os.ReadFile(filepath.Join(dir, "registry-addr"))
	if err != nil {
		return nil, fmt.Errorf("no local cluster runs in %s (make demo starts one): %w", dir, err)
	}
	c.Registry = strings.TrimSpace(string(addr))
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: Scheme()}); err != nil {
		return nil, err
	}
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	return c, nil
}

// Start runs a component as a child process of the cluster, with the admin kubeconfig.
func (c *Cluster) Start(name, bin string, args, env []string) (*Process, error) {
	p, err := StartProcess(c.Dir, name, bin, args, append([]string{"KUBECONFIG=" + c.Kubeconfig}, env...))
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	return p, nil
}

// Stop stops everything of the cluster and undoes what its node did to the machine.
func (c *Cluster) Stop() error {
	return Down(c.Dir, c.Name, c.Bin)
}

// Down stops what a cluster directory records: the real node, with everything it changed on
// the machine, the processes started for it, and the control plane. It works from another
// process too (make demo-down).
func Down(dir, name, bin string) error {
	errs := []error{stopNode(dir, bin)}
	c := &Cluster{Options: Options{Name: name, Dir: dir, Bin: bin}, Kubeconfig: filepath.Join(dir, "kubeconfig.yaml")}
	if _, err := os.Stat(filepath.Join(dir, "kwok", "clusters", name)); err == nil {
		errs = append(errs, c.kwokctl(context.Background(), "delete", "cluster", "--kubeconfig", c.Kubeconfig))
	}
	killRecorded(dir)
	return errors.Join(errs...)
}

// Reap stops the clusters that earlier runs left running under parent, for example when a
// test binary was killed before it could clean up.
func Reap(parent, bin string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "*", "kwokctl.yaml"))
	for _, cfg := range dirs {
		dir := filepath.Dir(cfg)
		names, _ := filepath.Glob(filepath.Join(dir, "kwok", "clusters", "*"))
		for _, n := range names {
			_ = Down(dir, filepath.Base(n), bin)
		}
		killRecorded(dir)
	}
}

// AuditLog is the API server's audit log, written when Options.AuditPolicy is set.
func (c *Cluster) AuditLog() string {
	return filepath.Join(c.Dir, "kwok", "clusters", c.Name, "logs", "audit.log")
}

// LogDir is where every component writes its log.
func (c *Cluster) LogDir() string { return filepath.Join(c.Dir, "logs") }

// freePorts returns n TCP ports free on loopback now.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
