package security_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// TestTheManagerPassesTheRestrictedPodSecurityStandard asks a real API server, whose
// PodSecurity admission enforces "restricted" in the namespace, to admit the manager's pod as
// config/ and the ClusterServiceVersion describe it.
func TestTheManagerPassesTheRestrictedPodSecurityStandard(t *testing.T) {
	env := &envtest.Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}
	cfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	require.NoError(t, c.Create(ctx, ns))

	admit := func(name string, spec corev1.PodSpec) error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}, Spec: spec}
		return c.Create(ctx, pod, client.DryRunAll)
	}

	// The check is real: a pod that may escalate privileges is refused.
	bad := managerFromConfig(t).Spec.Template.Spec
	bad.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	err = admit("bad", bad)
	require.True(t, apierrors.IsForbidden(err), "want the restricted standard to refuse it, got %v", err)
	require.Contains(t, err.Error(), "allowPrivilegeEscalation")

	require.NoError(t, admit("from-config", managerFromConfig(t).Spec.Template.Spec))
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	for _, d := range b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		require.NoError(t, admit("from-csv", d.Spec.Template.Spec), d.Name)
	}
}

func managerFromConfig(t *testing.T) *appsv1.Deployment {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	require.NoError(t, err)
	for _, doc := range splitYAML(raw) {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err == nil && d.Kind == "Deployment" {
			return &d
		}
	}
	t.Fatal("no Deployment in config/manager/manager.yaml")
	return nil
}
