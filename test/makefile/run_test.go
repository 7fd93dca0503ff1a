// Package makefile tests the Makefile's targets that a developer runs by hand and no other
// suite runs: make run, the manager started from the host against a real API server, and make
// deploy's rendering.
package makefile_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestMakeRunReconcilesFromTheHost runs make run's own recipe (without regenerating the
// manifests, which make test verifies apart) against an API server that has the CRD as make
// install applies it, and waits until the manager is ready and reconciles an App. Then it
// stops the manager the way a developer does, with Ctrl-C, and wants a clean exit.
func TestMakeRunReconcilesFromTheHost(t *testing.T) {
	root := localcluster.RepoRoot()
	env := &envtest.Environment{
		BinaryAssetsDirectory: filepath.Join(root, "bin"),
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "developer", Groups: []string{"system:masters"}}, cfg)
	require.NoError(t, err)
	kubeconfig, err := user.KubeConfig()
	require.NoError(t, err)
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfigPath, kubeconfig, 0o600))

	probes, metrics := freePort(t), freePort(t)
	cmd := exec.Command("make", "--no-print-directory", "-o", "manifests", "-o", "generate", "run")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath,
		"APP_OPERATOR_HEALTH_PROBE_BIND_ADDRESS="+probes, "APP_OPERATOR_METRICS_BIND_ADDRESS="+metrics)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches make, go run and the manager
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	// make and go run report Ctrl-C in their exit status, as they do for any program: the
	// manager's own shutdown is told by its log.
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("make run said:\n%s", out.String())
		}
	})

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get("http://" + probes + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode)
	}, 3*time.Minute, 250*time.Millisecond, "make run's manager to become ready")

	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, appv1.AddToScheme(scheme))
	k, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}))
	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "web"},
		Spec: appv1.AppSpec{Image: "registry.example.com/web:1.0", Replicas: ptr.To(int32(2))}}
	require.NoError(t, k.Create(ctx, app))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d := &appsv1.Deployment{}
		assert.NoError(c, k.Get(ctx, client.ObjectKeyFromObject(app), d))
		got := &appv1.App{}
		if !assert.NoError(c, k.Get(ctx, client.ObjectKeyFromObject(app), got)) {
			return
		}
		assert.Equal(c, int64(1), got.Status.ObservedGeneration, "the status describes the App's generation")
		assert.Equal(c, ptr.To(int32(2)), got.Status.DesiredReplicas)
		// No kube-controller-manager runs here: the Deployment never reports on its spec.
		reconciling := meta.FindStatusCondition(got.Status.Conditions, appv1.ConditionReconciling)
		if assert.NotNil(c, reconciling, "the App has a status") {
			assert.Equal(c, appv1.ReasonRollingOut, reconciling.Reason)
		}
	}, time.Minute, 250*time.Millisecond, "the App's Deployment and status")

	// Ctrl-C.
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
	stopped = true
	select {
	case <-exited:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		t.Fatal("make run did not stop within a minute of Ctrl-C")
	}
	log := out.String()
	require.Regexp(t, regexp.MustCompile(`"serve":\s*"controllers"`), log, "make run serves the controllers only")
	require.Contains(t, log, "All workers finished", "the manager drained its workers")
	require.NotRegexp(t, regexp.MustCompile(`"level":\s*"error"`), log, "the manager logged no error")
	_, err = net.DialTimeout("tcp", probes, time.Second)
	require.Error(t, err, "the manager is gone")
}

// freePort returns a loopback address no one listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// lockedBuffer collects the output of a command that writes from two streams at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
