package localcluster

import (
	"context"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MetricsServerImage serves the resource metrics API that HorizontalPodAutoscalers read: the
// metrics-server pinned in hack/tools/kube.
var MetricsServerImage = LocalImageHost + "/metrics-server:v0.8.0"

// DownscaleStabilization is how long the local cluster's HorizontalPodAutoscalers keep a higher
// count after the load drops, where Kubernetes waits five minutes: long enough to ride out a
// lull, short enough for a test to see an App scale back down.
const DownscaleStabilization = "30s"

// metricsServerManifest is metrics-server's release manifest (its manifests/overlays/release,
// what its releases publish as components.yaml), which make renders into bin/ from the pinned
// module.
const metricsServerManifest = "metrics-server.yaml"

// installMetricsServer installs metrics-server from its release manifest, as a cluster admin
// would, with the local cluster's image. It reads the real node's kubelet, whose serving
// certificate it verifies with the cluster's CA, and leaves kwok's fake nodes, which have no
// kubelet, alone. It does not wait: its first metrics take a scrape interval to come, and only
// what scales by load needs them.
func (c *Cluster) installMetricsServer(ctx context.Context) error {
	return c.createFromManifest(ctx, filepath.Join(c.Bin, metricsServerManifest), useLocalMetricsServer)
}

// useLocalMetricsServer points metrics-server's Deployment at the local image, the cluster's CA
// (in every pod's service account volume) and the real node.
func useLocalMetricsServer(_ *unstructured.Unstructured, ctr map[string]any) {
	ctr["image"] = MetricsServerImage
	args, _ := ctr["args"].([]any)
	ctr["args"] = append(args,
		"--kubelet-certificate-authority=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		"--node-selector="+NodeLabel+"=true")
}
