package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PrometheusOperatorModule is the Prometheus Operator release whose CRDs give a cluster the
// monitoring.coreos.com API, from its module as the Go module proxy serves it.
const PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// InstallMonitoringAPI creates the Prometheus Operator's ServiceMonitor and PrometheusRule
// CRDs, as a cluster that runs it has them, and waits until they are served.
func (c *Cluster) InstallMonitoringAPI(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", PrometheusOperatorModule)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("downloading %s: %w", PrometheusOperatorModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return fmt.Errorf("reading what go mod download says of %s: %w", PrometheusOperatorModule, err)
	}
	if mod.Dir == "" {
		return fmt.Errorf("go mod download says no directory for %s: %s", PrometheusOperatorModule, out)
	}
	for _, kind := range []string{"servicemonitors", "prometheusrules"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeFile(filepath.Join(mod.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+kind+".yaml"), crd); err != nil {
			return err
		}
		if err := c.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		if err := c.waitEstablished(ctx, crd.Name); err != nil {
			return err
		}
	}
	return nil
}
