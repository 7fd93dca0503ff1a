// Command manager runs App Operator: the App controller and the App webhooks.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/operator-framework/operator-lib/proxy"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/internal/operator"
)

type options struct {
	metricsAddr             string
	secureMetrics           bool
	metricsCertPath         string
	probeAddr               string
	webhookPort             int
	webhookCertPath         string
	enableHTTP2             bool
	leaderElect             bool
	leaderElectionNamespace string
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	maxConcurrentReconciles int
	migrationInterval       time.Duration
	statusBatchWindow       time.Duration
	syncPeriod              time.Duration
	pprofAddr               string
	qps                     float64
	burst                   int
	zap                     zap.Options
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS, to authenticated and authorized clients only.")
	flag.StringVar(&o.metricsCertPath, "metrics-cert-path", "", "Directory holding tls.crt and tls.key for the metrics endpoint; empty means a self-signed certificate.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health and readiness probes bind to.")
	flag.IntVar(&o.webhookPort, "webhook-port", webhook.DefaultPort, "Port the webhook server listens on.")
	flag.StringVar(&o.webhookCertPath, "webhook-cert-path", "/tmp/k8s-webhook-server/serving-certs", "Directory holding the webhook server's tls.crt and tls.key.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve webhooks and metrics over HTTP/2 as well; off because of the HTTP/2 Rapid Reset and Stream Cancellation vulnerabilities.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one manager reconciles at a time.")
	flag.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election lease; empty means the manager's own namespace.")
	flag.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a leader's lease lasts: the longest a standby waits when the leader dies.")
	flag.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew its lease before it gives up leading.")
	flag.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second, "How often leader election clients try to acquire or renew the lease.")
	flag.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 16, "Number of Apps reconciled at the same time.")
	flag.DurationVar(&o.migrationInterval, "storage-migration-interval", 10*time.Minute, "How often to check whether Apps stored in an older version must be rewritten.")
	flag.DurationVar(&o.statusBatchWindow, "status-batch-window", time.Minute, "Shortest time between two status writes of an App that report progress rather than a condition's change; changes meanwhile are written together.")
	flag.DurationVar(&o.syncPeriod, "sync-period", 10*time.Hour, "How often every App is reconciled again even when nothing changed.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of the pprof endpoint; empty disables it.")
	flag.Float64Var(&o.qps, "kube-api-qps", 200, "Requests per second to the API server the manager may make, sustained.")
	flag.IntVar(&o.burst, "kube-api-burst", 400, "Requests to the API server the manager may make in a burst.")
	o.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))

	if err := run(o); err != nil {
		ctrl.Log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	tlsOpts := tlsOptions(o.enableHTTP2)

	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	metricsOpts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		CertDir:       o.metricsCertPath,
		TLSOpts:       tlsOpts,
	}
	if o.secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        operator.Scheme(),
		Metrics:                       metricsOpts,
		WebhookServer:                 webhook.NewServer(webhook.Options{Port: o.webhookPort, CertDir: o.webhookCertPath, TLSOpts: tlsOpts}),
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "app-operator.mycompany.com",
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		Cache:                         operator.CacheOptions(o.syncPeriod),
		PprofBindAddress:              o.pprofAddr,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	if err := operator.Setup(mgr, operator.Options{
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		Desired:                 desired.Options{ProxyEnv: proxy.ReadProxyVarsFromEnv()},
		MigrationInterval:       o.migrationInterval,
		StatusBatchWindow:       o.statusBatchWindow,
		// OLM sets OPERATOR_CONDITION_NAME; the Deployment passes its namespace down.
		OperatorCondition: client.ObjectKey{Namespace: os.Getenv("OPERATOR_NAMESPACE"), Name: os.Getenv("OPERATOR_CONDITION_NAME")},
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}

	ctrl.Log.Info("starting manager")
	return mgr.Start(ctrl.SetupSignalHandler())
}

// tlsOptions configure the webhook and metrics servers: TLS 1.2 or newer, and HTTP/1.1 only
// unless HTTP/2 is enabled, because of the HTTP/2 Rapid Reset (CVE-2023-44487) and Stream
// Cancellation (CVE-2023-39325) vulnerabilities.
func tlsOptions(enableHTTP2 bool) []func(*tls.Config) {
	opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	if !enableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}
