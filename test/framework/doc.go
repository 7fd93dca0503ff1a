// Package framework runs App Operator the way users get it, on a real control plane on this
// machine: etcd, kube-apiserver, kube-controller-manager and kube-scheduler started by kwokctl's
// binary runtime with kwok's fake nodes, the real OLM (olm and catalog operators), the
// project's catalog served by opm, and the manager binary run as the process OLM's Deployment
// describes. No container runs: kwok marks pods Running, and the API server reaches the
// webhooks of the local manager through its egress selector (see egress.go).
//
// Every component writes its log under the cluster's directory, which is kept when a test
// fails. The e2e suites, make demo and make bench all build on this package.
package framework
