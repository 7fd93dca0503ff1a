package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mycompany/app-operator/internal/release/bundle"
)

// MetricsServerImage serves the resource metrics API that HorizontalPodAutoscalers read: the
// metrics-server pinned in hack/tools/metrics.
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
	f, err := os.Open(filepath.Join(c.Bin, metricsServerManifest))
	if err != nil {
		return fmt.Errorf("metrics-server's manifest (make tools renders it): %w", err)
	}
	defer f.Close()
	objs, err := bundle.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", metricsServerManifest, err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if err := useLocalMetricsServer(o); err != nil {
				return err
			}
		}
		if err := c.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating metrics-server's %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// useLocalMetricsServer points metrics-server's Deployment at the local image, the cluster's CA
// (in every pod's service account volume) and the real node.
func useLocalMetricsServer(d *unstructured.Unstructured) error {
	containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("metrics-server's Deployment: %w", err)
	}
	if len(containers) != 1 {
		return fmt.Errorf("metrics-server's Deployment: want one container, got %d", len(containers))
	}
	ctr := containers[0].(map[string]any)
	ctr["image"] = MetricsServerImage
	args, _ := ctr["args"].([]any)
	ctr["args"] = append(args,
		"--kubelet-certificate-authority=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		"--node-selector="+NodeLabel+"=true")
	return unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
}
