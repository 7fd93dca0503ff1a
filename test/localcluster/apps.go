package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// SampleApp reads the v1 sample App that ships in the bundle's examples (config/samples), in
// namespace ns: its pods run the sample workload on the real node.
func SampleApp(ns string) (*appv1.App, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "samples", "mycompany_v1_app.yaml"))
	if err != nil {
		return nil, err
	}
	app := &appv1.App{}
	if err := yaml.UnmarshalStrict(raw, app); err != nil {
		return nil, err
	}
	app.Namespace = ns
	return app, nil
}

// WaitForAppAvailable waits until an App is Available for its current generation with every
// desired replica available, and says what it last saw if not.
func (c *Cluster) WaitForAppAvailable(ctx context.Context, key client.ObjectKey, timeout time.Duration) error {
	app := &appv1.App{}
	err := c.Poll(ctx, timeout, "App "+key.String()+" to become Available", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key, app); err != nil {
			return false, err
		}
		want := int32(1)
		if app.Spec.Replicas != nil {
			want = *app.Spec.Replicas
		}
		return app.Status.ObservedGeneration == app.Generation && app.Status.AvailableReplicas == want &&
			meta.IsStatusConditionTrue(app.Status.Conditions, appv1.ConditionAvailable), nil
	})
	if err != nil {
		return fmt.Errorf("%w; last status: %+v", err, app.Status)
	}
	return nil
}

// OnFakeNodes makes an App's pods run on kwok's fake nodes, through the App's own scheduling
// fields: for workloads at scale that need not really run.
func OnFakeNodes(spec *appv1.AppSpec) {
	spec.NodeSelector = map[string]string{FakeNodeLabel: "kwok"}
	spec.Tolerations = []corev1.Toleration{{Key: FakeNodeTaint.Key, Operator: corev1.TolerationOpEqual, Value: FakeNodeTaint.Value, Effect: FakeNodeTaint.Effect}}
}
