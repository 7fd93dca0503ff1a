// Package envtest runs App Operator, wired exactly as it ships, against a real kube-apiserver
// and etcd (the binaries built into bin/ and found through KUBEBUILDER_ASSETS). The
// admission webhooks are served by the operator's own webhook server over TLS. There is no kube-controller-manager: tests play the Deployment controller themselves.
package envtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/mycompany/app-operator/controllers"
	"github.com/mycompany/app-operator/internal/checkout"
	"github.com/mycompany/app-operator/internal/metrics"
	"github.com/mycompany/app-operator/internal/operator"
)

// Environment is a running API server with the operator's manager attached.
type Environment struct {
	// Client talks to the API server directly, never through a cache. Its scheme adds the
	// CustomResourceDefinition type to the operator's.
	Client client.Client
	// Cache reads from the operator's cache, as its reconciler does.
	Cache client.Reader
	// Config is an admin configuration for the API server.
	Config *rest.Config
	// Writes counts the create, update, patch, apply and delete calls the operator made.
	Writes atomic.Int64

	env    *envtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// Start brings up the API server, installs the CRD and webhooks, and starts the operator.
// Reconciler panics are not recovered, so a panic fails the whole test binary.
func Start() (*Environment, error) {
	// Errors only: a failing test shows what went wrong without the noise of every reconcile.
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel), zap.StacktraceLevel(zapcore.PanicLevel)))
	root, err := checkout.Root()
	if err != nil {
		return nil, err
	}
	e := &Environment{
		env: &envtest.Environment{
			// KUBEBUILDER_ASSETS, when set, takes precedence.
			BinaryAssetsDirectory: filepath.Join(root, "bin"),
			CRDInstallOptions: envtest.CRDInstallOptions{
				Paths:              []string{filepath.Join(root, "config", "crd", "bases")},
				ErrorIfPathMissing: true,
				Scheme:             operator.Scheme(),
			},
			WebhookInstallOptions: envtest.WebhookInstallOptions{
				Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")},
			},
		},
		done: make(chan error, 1),
	}
	cfg, err := e.env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the API server (run make tools-envtest to build it into bin/): %w", err)
	}
	e.Config = cfg
	scheme := operator.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, e.stopAfter(err)
	}

	wh := e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 operator.Scheme(),
		Cache:                  operator.CacheOptions(10*time.Hour, nil),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir,
		}),
		Controller: config.Controller{RecoverPanic: ptr.To(false), SkipNameValidation: ptr.To(true)},
		NewClient:  e.countingClient,
	})
	if err != nil {
		return nil, e.stopAfter(err)
	}
	if err := operator.Setup(mgr, operator.Options{
		Controllers: true, Webhooks: true,
		MaxConcurrentReconciles: 4,
	}); err != nil {
		return nil, e.stopAfter(err)
	}

	e.Cache = mgr.GetCache()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, e.stopAfter(fmt.Errorf("the manager's cache did not sync"))
	}
	return e, nil
}

// NewCache starts a cache as a manager starting now would, and returns it synced; it stops
// with the test.
func (e *Environment) NewCache(t *testing.T) cache.Cache {
	t.Helper()
	o := operator.CacheOptions(10*time.Hour, nil)
	o.Scheme = operator.Scheme()
	c, err := cache.New(e.Config, o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	require.True(t, c.WaitForCacheSync(ctx), "the cache did not sync")
	return c
}

// countingClient is the manager's client, counting every write it makes.
func (e *Environment) countingClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(cfg, opts)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, CountingWrites(func() { e.Writes.Add(1) })), nil
}

// CountingWrites are interceptor functions that call count before every write a client
// makes: creates, updates, patches, applies, deletes, and status writes.
func CountingWrites(count func()) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			count()
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			count()
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
}

// Stop stops the operator and the API server.
func (e *Environment) Stop() error {
	e.cancel()
	if err := <-e.done; err != nil {
		return e.stopAfter(fmt.Errorf("the manager failed: %w", err))
	}
	return e.env.Stop()
}

func (e *Environment) stopAfter(err error) error {
	if stopErr := e.env.Stop(); stopErr != nil {
		return fmt.Errorf("%w (and stopping the API server: %w)", err, stopErr)
	}
	return err
}

// Namespace creates a namespace with a generated name for one test.
func (e *Environment) Namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	require.NoError(t, e.Client.Create(context.Background(), ns))
	return ns.Name
}

// Eventually fails the test unless check passes within the timeout; check reports through
// the CollectT it gets, so the failure says what was last wrong.
func Eventually(t *testing.T, check func(c *require.Assertions), msgAndArgs ...any) {
	t.Helper()
	require.EventuallyWithT(t, func(ct *assert.CollectT) { check(require.New(ct)) }, 20*time.Second, 50*time.Millisecond, msgAndArgs...)
}

// Reconciles returns how many reconciles the App controller has run.
func Reconciles() float64 {
	return testutil.ToFloat64(metrics.ReconcileCount.WithLabelValues(controllers.ControllerName))
}

// WaitForReconciles waits until the App controller has run n more reconciles than it had when
// given since (a value of Reconciles), and then has nothing queued and nothing running.
func WaitForReconciles(t *testing.T, since float64, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return Reconciles() >= since+float64(n) }, 20*time.Second, 10*time.Millisecond,
		"waiting for %d reconciles after %v", n, since)
	WaitIdle(t)
}

// WaitIdle waits until the App controller has nothing queued and no reconcile running, for
// a quarter of a second in a row.
func WaitIdle(t *testing.T) {
	t.Helper()
	idleSince := time.Time{}
	require.Eventually(t, func() bool {
		if queued() > 0 {
			idleSince = time.Time{}
			return false
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		return time.Since(idleSince) > 250*time.Millisecond
	}, 20*time.Second, 10*time.Millisecond, "waiting for the App controller to go idle")
}

// queued is the App controller's queue depth plus its running reconciles.
func queued() float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 1
	}
	var n float64
	for _, f := range families {
		switch f.GetName() {
		case "workqueue_depth", "controller_runtime_active_workers":
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if (l.GetName() == "name" || l.GetName() == "controller") && l.GetValue() == controllers.ControllerName {
						n += m.GetGauge().GetValue()
					}
				}
			}
		}
	}
	return n
}

// Update reads obj afresh, applies mutate and writes it, again on conflict: the operator may
// write the object (its status, say) between the read and the write.
func (e *Environment) Update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	require.NoError(t, e.TryUpdate(obj, mutate))
}

// TryUpdate is Update for a write the API server may refuse: it returns the refusal.
func (e *Environment) TryUpdate(obj client.Object, mutate func()) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return e.Client.Update(context.Background(), obj)
	})
}

// User is a client of the API server authenticated as a user with the given name and no
// rights but those the test grants it.
func (e *Environment) User(t *testing.T, name string) client.Client {
	t.Helper()
	u, err := e.env.ControlPlane.AddUser(envtest.User{Name: name}, e.Config)
	require.NoError(t, err)
	c, err := client.New(u.Config(), client.Options{Scheme: e.Client.Scheme()})
	require.NoError(t, err)
	return c
}

// StoredAPIVersion returns the apiVersion an object is stored in, read from etcd itself
// through its JSON gateway: the API server converts what it reads, so only etcd tells.
func (e *Environment) StoredAPIVersion(t *testing.T, key string) string {
	t.Helper()
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	require.NoError(t, err)
	resp, err := http.Post(e.env.ControlPlane.Etcd.URL.String()+"/v3/kv/range", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Kvs []struct {
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Kvs, 1, "etcd has no key %s", key)
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	require.NoError(t, json.Unmarshal(out.Kvs[0].Value, &obj))
	return obj.APIVersion
}

// Run is the TestMain of a package tested against the environment: it starts the
// environment into env, runs the tests and stops it, and returns the exit code.
func Run(m *testing.M, env **Environment) int {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}
