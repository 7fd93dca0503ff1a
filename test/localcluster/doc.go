// Package localcluster is the local cluster platform: it runs App Operator the way users get
// it, on a real control plane and a real node on this machine. One file per part:
//
//   - cluster.go: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, started by
//     kwokctl's binary runtime, and kwok's fake nodes for workloads at scale;
//   - the real node: hostnet.go (its bridge and IP), containerd.go, kubelet.go, kubeproxy.go,
//     dns.go (CoreDNS) and metricsserver.go (the resource metrics API), with pki.go's
//     certificates and images.go's images, pushed to the loopback registry;
//   - olm.go: the real OLM; releases.go builds every release's images, catalog.go publishes
//     the catalog, subscription.go subscribes, approves and uninstalls;
//   - manager.go, restart.go: App Operator's manager pods as OLM runs them, their restarts and
//     crashes, and kube-apiserver's;
//   - apps.go, probe.go, metrics.go, token.go, monitoring.go, scorecard.go, variant.go, and
//     scope.go (which namespaces an install serves): what the suites check with.
//
// Every component writes its log under the cluster's directory, which is kept when a test
// fails; teardown.go checks that nothing of the cluster stays on the machine. The e2e suites,
// make demo and make bench all build on this package.
package localcluster
