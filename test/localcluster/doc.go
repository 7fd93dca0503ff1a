// Package localcluster is the local cluster platform: it runs App Operator the way users get
// it, on a real control plane on this machine. One file per part:
//
//   - cluster.go: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, started by
//     kwokctl's binary runtime, and kwok's fake nodes;
//   - olm.go: the real OLM (olm and catalog operators); catalog.go serves the project's catalog
//     with opm; subscription.go subscribes, approves and uninstalls;
//   - operator.go and hostmanager.go: the manager binary, run as a host process the way the pod
//     of OLM's Deployment would run it, following that Deployment through upgrades;
//   - webhookegress.go: the API server's egress selector, which routes its calls to the
//     webhook Service OLM made to that host process.
//
// No container runs: kwok marks pods Running. Every component writes its log under the
// cluster's directory, which is kept when a test fails. The e2e suites, make demo and make
// bench all build on this package.
package localcluster
