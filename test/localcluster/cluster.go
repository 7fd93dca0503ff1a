package localcluster

import (
	"context"
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
	// Name names the cluster; kwokctl prefixes its processes with it.
	Name string
	// Dir holds everything of the cluster: kubeconfig, logs, pids, certificates.
	Dir string
	// Bin is the directory of the tools built from hack/tools (bin/).
	Bin string
	// Nodes is the number of fake nodes; each holds PodsPerNode pods.
	Nodes, PodsPerNode int
	// AuditPolicy, when set, is the path of an audit policy for the API server, which then
	// writes the audit log at AuditLog().
	AuditPolicy string
}

// Cluster is a running local control plane.
type Cluster struct {
	Options
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig string
	// Config is the admin configuration.
	Config *rest.Config
	// Client is an admin client knowing the operator's, the CRD and OLM's types.
	Client client.Client
	// Routes connect webhook Services to local processes.
	Routes *Routes
	// ManagerArgs are added to the arguments of every manager RunOperator starts.
	ManagerArgs []string

	processes     []*Process
	stop          context.CancelFunc
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

// StartCluster starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// with kwokctl, creates the fake nodes, and serves the API server's egress to webhooks.
func StartCluster(ctx context.Context, o Options) (*Cluster, error) {
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	if o.PodsPerNode == 0 {
		o.PodsPerNode = 1000
	}
	for _, tool := range []string{"kwokctl", "kwok", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(o.Bin, tool)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run make tools", tool, o.Bin)
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Options: o, Kubeconfig: filepath.Join(o.Dir, "kubeconfig.yaml"), Routes: &Routes{path: filepath.Join(o.Dir, "routes.json")}}

	// A unix socket path may hold at most 107 bytes: keep it short.
	sockDir, err := os.MkdirTemp("", "appop-")
	if err != nil {
		return nil, err
	}
	socket := filepath.Join(sockDir, "egress.sock")
	if err := os.WriteFile(filepath.Join(o.Dir, "egress-socket"), []byte(socket), 0o644); err != nil {
		return nil, err
	}
	config, err := c.kwokctlConfig(socket)
	if err != nil {
		return nil, err
	}
	if err := c.kwokctl(ctx, "create", "cluster", "--config", config, "--kubeconfig", c.Kubeconfig, "--timeout", "2m"); err != nil {
		return nil, err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	if c.Client, err = client.New(c.Config, client.Options{Scheme: Scheme()}); err != nil {
		return nil, err
	}
	if err := c.createNodes(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// ServeEgress runs the egress proxy inside this process until Stop.
func (c *Cluster) ServeEgress() error {
	socket, err := os.ReadFile(filepath.Join(c.Dir, "egress-socket"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() { _ = ServeEgress(ctx, string(socket), c.Routes.path, c.Client) }()
	return nil
}

// kwokctlConfig writes the kwokctl configuration: the binaries built here, fixed ports, wide
// Service and pod ranges, no client rate limits, and the API server's egress to webhooks.
func (c *Cluster) kwokctlConfig(socket string) (string, error) {
	egress := filepath.Join(c.Dir, "egress-selector.yaml")
	if err := os.WriteFile(egress, []byte(egressConfig(socket)), 0o644); err != nil {
		return "", err
	}
	ports, err := freePorts(6)
	if err != nil {
		return "", err
	}
	bin := func(name string) string { return filepath.Join(c.Bin, name) }
	cfg := fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  runtime: binary
  bindAddress: 127.0.0.1
  kubeApiserverPort: %d
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
  - key: egress-selector-config-file
    value: %s
  - key: service-cluster-ip-range
    value: 10.96.0.0/16
- name: kube-controller-manager
  extraArgs:
  - key: service-cluster-ip-range
    value: 10.96.0.0/16
`, ports[0], ports[1], ports[2], ports[3], ports[4], ports[5],
		bin("kube-apiserver"), bin("kube-controller-manager"), bin("kube-scheduler"), bin("kwok"), bin("etcd"), bin("kubectl"),
		c.AuditPolicy, egress)
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

// createNodes creates the fake nodes; kwok manages every node of its cluster. Each node gets a
// pod range of its own, wide enough for PodsPerNode pods.
func (c *Cluster) createNodes(ctx context.Context) error {
	pods := resource.MustParse(fmt.Sprint(c.PodsPerNode))
	for i := range c.Nodes {
		cidr := fmt.Sprintf("10.%d.0.0/16", 128+i)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("kwok-node-%d", i),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("kwok-node-%d", i), "kubernetes.io/os": "linux",
					"kubernetes.io/arch": "amd64", "type": "kwok"},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
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

// Start runs a component as a child process of the cluster, with the admin kubeconfig.
func (c *Cluster) Start(name, bin string, args, env []string) (*Process, error) {
	p, err := StartProcess(c.Dir, name, bin, args, append([]string{"KUBECONFIG=" + c.Kubeconfig}, env...))
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	return p, nil
}

// Stop ends every process of the cluster, the egress proxy and the control plane.
func (c *Cluster) Stop() error {
	for i := len(c.processes) - 1; i >= 0; i-- {
		_ = c.processes[i].Stop(5 * time.Second)
	}
	if c.stop != nil {
		c.stop()
	}
	return Down(c.Dir, c.Name, c.Bin)
}

// Down stops what a cluster directory records: processes started for it, and the control
// plane. It works from another process too (make demo-down).
func Down(dir, name, bin string) error {
	killRecorded(dir)
	c := &Cluster{Options: Options{Name: name, Dir: dir, Bin: bin}, Kubeconfig: filepath.Join(dir, "kubeconfig.yaml")}
	err := c.kwokctl(context.Background(), "delete", "cluster", "--kubeconfig", c.Kubeconfig)
	if socket, rerr := os.ReadFile(filepath.Join(dir, "egress-socket")); rerr == nil {
		_ = os.RemoveAll(filepath.Dir(string(socket)))
	}
	return err
}

// Reap stops the clusters that earlier runs left running under parent, for example when a
// test binary was killed before it could clean up, and removes their directories.
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
