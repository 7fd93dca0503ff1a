package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// options are the manager's flags.
type options struct {
	serve                   string
	metricsAddr             string
	secureMetrics           bool
	metricsCertPath         string
	probeAddr               string
	webhookPort             int
	webhookCertPath         string
	webhookDrain            time.Duration
	enableHTTP2             bool
	leaderElect             bool
	leaderElectionNamespace string
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	maxConcurrentReconciles int
	watchNamespaces         string
	syncPeriod              time.Duration
	pprofAddr               string
	installMonitoring       bool
	qps                     float64
	burst                   int
	zap                     zap.Options
}

// What a manager process serves. The bundle runs the controllers and the webhooks in two
// containers of each pod, so that the webhooks go on answering while the controllers' process
// restarts: a crash or an OOM kill of the leader, which holds the cache and does the work,
// refuses no App write.
const (
	ServeAll         = "all"
	ServeControllers = "controllers"
	ServeWebhooks    = "webhooks"
)

func (o *options) controllers() bool { return o.serve != ServeWebhooks }

func (o *options) webhooks() bool { return o.serve != ServeControllers }

// namespaces are the namespaces --watch-namespaces names; none means every namespace.
func (o *options) namespaces() []string {
	var names []string
	for _, ns := range strings.Split(o.watchNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			names = append(names, ns)
		}
	}
	return names
}

// bindFlags defines the manager's flags on fs, with their defaults, and returns the options
// they set once fs is parsed.
func bindFlags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.serve, "serve", ServeAll, "What this process runs: "+ServeControllers+" (the App controller and the monitoring installer, behind leader election), "+ServeWebhooks+" (the defaulting and validating webhooks, on every replica) or "+ServeAll+".")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS, to authenticated and authorized clients only.")
	fs.StringVar(&o.metricsCertPath, "metrics-cert-path", "", "Directory holding tls.crt and tls.key for the metrics endpoint; empty means a self-signed certificate.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health and readiness probes bind to.")
	fs.IntVar(&o.webhookPort, "webhook-port", webhook.DefaultPort, "Port the webhook server listens on.")
	fs.StringVar(&o.webhookCertPath, "webhook-cert-path", "/tmp/k8s-webhook-server/serving-certs", "Directory holding the webhook server's tls.crt and tls.key.")
	fs.DurationVar(&o.webhookDrain, "webhook-drain-period", 10*time.Second, "How long the webhook server goes on serving once told to stop, asking the API server to close each connection, so that no call fails; 0 stops at once.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve webhooks and metrics over HTTP/2 as well; off because of the HTTP/2 Rapid Reset and Stream Cancellation vulnerabilities.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one manager reconciles at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election lease; empty means the manager's own namespace.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a leader's lease lasts: the longest a standby waits when the leader dies.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew its lease before it gives up leading.")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second, "How often leader election clients try to acquire or renew the lease.")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 8, "Number of Apps reconciled at the same time. More workers than the API server serves at once lengthen each reconcile without converging sooner.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose Apps the manager reconciles, and the only ones it caches; empty means every namespace. OLM passes its OperatorGroup's target namespaces (olm.targetNamespaces).")
	fs.DurationVar(&o.syncPeriod, "sync-period", 10*time.Hour, "How often every App is reconciled again even when nothing changed.")
	fs.BoolVar(&o.installMonitoring, "install-monitoring", true, "Apply the ServiceMonitor and PrometheusRule in the manager's namespace wherever the Prometheus Operator's API is served; false where the install carries them (the Helm chart).")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of the pprof endpoint; empty disables it.")
	fs.Float64Var(&o.qps, "kube-api-qps", 200, "Requests per second to the API server the manager may make, sustained.")
	fs.IntVar(&o.burst, "kube-api-burst", 400, "Requests to the API server the manager may make in a burst.")
	o.zap.BindFlags(fs)
	return o
}

// validate refuses every flag value the manager cannot run as asked, naming each flag at fault,
// before anything starts: a zero sync period would turn resyncs off, zero requests per second
// or burst would be replaced by client-go's defaults, and leader election would refuse its
// durations only once the manager starts, without naming the flags.
func (o *options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch o.serve {
	case ServeAll, ServeControllers, ServeWebhooks:
	default:
		bad("--serve must be %s, %s or %s, got %q", ServeControllers, ServeWebhooks, ServeAll, o.serve)
	}
	for _, ns := range o.namespaces() {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			bad("--watch-namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; "))
		}
	}
	if o.maxConcurrentReconciles < 1 {
		bad("--max-concurrent-reconciles must be at least 1, got %d", o.maxConcurrentReconciles)
	}
	if o.webhookPort < 1 || o.webhookPort > 65535 {
		bad("--webhook-port must be between 1 and 65535, got %d", o.webhookPort)
	}
	if o.webhookDrain < 0 {
		bad("--webhook-drain-period must not be negative, got %v", o.webhookDrain)
	}
	if o.qps <= 0 {
		bad("--kube-api-qps must be positive, got %v", o.qps)
	}
	if o.burst < 1 {
		bad("--kube-api-burst must be at least 1, got %d", o.burst)
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"--sync-period", o.syncPeriod},
		{"--leader-election-lease-duration", o.leaseDuration},
		{"--leader-election-renew-deadline", o.renewDeadline},
		{"--leader-election-retry-period", o.retryPeriod},
	} {
		if d.value <= 0 {
			bad("%s must be positive, got %v", d.flag, d.value)
		}
	}
	if o.renewDeadline > 0 && o.leaseDuration > 0 && o.leaseDuration <= o.renewDeadline {
		bad("--leader-election-lease-duration (%v) must be longer than --leader-election-renew-deadline (%v)", o.leaseDuration, o.renewDeadline)
	}
	if jittered := time.Duration(leaderelection.JitterFactor * float64(o.retryPeriod)); o.retryPeriod > 0 && o.renewDeadline > 0 && o.renewDeadline <= jittered {
		bad("--leader-election-renew-deadline (%v) must be longer than %v times --leader-election-retry-period (%v)", o.renewDeadline, leaderelection.JitterFactor, o.retryPeriod)
	}
	return errors.Join(errs...)
}
