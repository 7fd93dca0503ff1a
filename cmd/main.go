// Command manager runs App Operator: the App controller and the App webhooks.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/internal/operator"
	appwebhook "github.com/mycompany/app-operator/internal/webhook"
)

// version and revision are the release and commit the manager was built from, set by the
// image builder (internal/release/image) with -ldflags -X.
var version, revision = "dev", "unknown"

func main() {
	o := bindFlags(flag.CommandLine)
	printVersion := flag.Bool("version", false, "Print the manager's version and commit, and exit.")
	if err := setFromEnv(flag.CommandLine, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.Parse()
	if *printVersion {
		fmt.Printf("app-operator %s (commit %s)\n", version, revision)
		return
	}
	if err := o.validate(); err != nil {
		// As the flag package reports a value it cannot parse.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	limit, err := softMemoryLimit(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		ctrl.Log.Info("soft memory limit set from the container's", "bytes", limit)
	}

	if err := run(*o); err != nil {
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
		Scheme:  operator.Scheme(),
		Metrics: metricsOpts,
		WebhookServer: &appwebhook.DrainingServer{Drain: o.webhookDrain,
			Server: webhook.NewServer(webhook.Options{Port: o.webhookPort, CertDir: o.webhookCertPath, TLSOpts: tlsOpts})},
		// Long enough for the webhook server's drain and the calls in flight after it.
		GracefulShutdownTimeout:       ptr.To(o.webhookDrain + 15*time.Second),
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect && o.controllers(),
		LeaderElectionID:              "app-operator.mycompany.com",
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		Cache:                         operator.CacheOptions(o.syncPeriod, o.namespaces()),
		PprofBindAddress:              o.pprofAddr,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	if err := operator.Setup(mgr, operator.Options{
		Controllers:             o.controllers(),
		Webhooks:                o.webhooks(),
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		Desired:                 desired.Options{ProxyEnv: proxy.ReadProxyVarsFromEnv()},
		// OLM names the OperatorCondition, and so the ClusterServiceVersion, in
		// OPERATOR_CONDITION_NAME; the Deployment passes its namespace down.
		CSV:               client.ObjectKey{Namespace: os.Getenv("OPERATOR_NAMESPACE"), Name: os.Getenv("OPERATOR_CONDITION_NAME")},
		InstallMonitoring: o.installMonitoring,
		FillGCPercent:     fillGCPercent(os.Getenv),
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the webhook server serves; a process without it is ready once it runs (a
	// standby too: it is there to take over).
	ready := healthz.Ping
	if o.webhooks() {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		return err
	}

	ctrl.Log.Info("starting manager", "version", version, "commit", revision, "serve", o.serve, "namespaces", o.namespaces())
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
