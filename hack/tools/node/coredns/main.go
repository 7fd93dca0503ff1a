// Command coredns is CoreDNS with the plugins a Kubernetes cluster's DNS runs (the Corefile of
// kubeadm's CoreDNS): the kubernetes plugin answers for cluster.local, forward sends the rest
// upstream. Building only these keeps out the cloud providers' SDKs of CoreDNS's full build.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// The plugins, registered by their init functions.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives is the order the plugins run in, as in CoreDNS's plugin.cfg.
var directives = []string{"reload", "health", "ready", "errors", "log", "loadbalance", "cache", "loop", "kubernetes", "forward"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
