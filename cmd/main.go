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
	maxConcurrentReconciles int
	migrationInterval       time.Duration
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
	flag.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "Number of Apps reconciled at the same time.")
	flag.DurationVar(&o.migrationInterval, "storage-migration-interval", 10*time.Minute, "How often to check whether Apps stored in an older version must be rewritten.")
	o.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))

	if err := run(o); err != nil {
		ctrl.Log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	tlsOpts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	cfg := ctrl.GetConfigOrDie()
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
		Cache:                         operator.CacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	if err := operator.Setup(mgr, operator.Options{
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		Desired:                 desired.Options{ProxyEnv: proxy.ReadProxyVarsFromEnv()},
		MigrationInterval:       o.migrationInterval,
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
