package desired_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
)

func TestTemplateHash(t *testing.T) {
	base := desired.For(app(), desired.Options{}).Deployment.Spec.Template
	hash := func(mutate func(*appv1.App)) string {
		return desired.TemplateHash(&desired.For(app(mutate), desired.Options{}).Deployment.Spec.Template)
	}
	same := hash(func(*appv1.App) {})
	require.NotEmpty(t, same)
	require.Equal(t, desired.TemplateHash(&base), same, "the same App hashes alike")

	cases := []struct {
		name    string
		mutate  func(*appv1.App)
		changes bool
	}{
		{"a new image", func(a *appv1.App) { a.Spec.Image = "registry.example.com/web:2.0" }, true},
		{"new arguments", func(a *appv1.App) { a.Spec.Args = []string{"--verbose"} }, true},
		{"a pod annotation", func(a *appv1.App) { a.Spec.PodAnnotations = map[string]string{"team": "shop"} }, true},
		{"a replica count: not the template", func(a *appv1.App) { a.Spec.Replicas = ptr.To(int32(7)) }, false},
		{"opting out of rollbacks: not the template", func(a *appv1.App) {
			a.Spec.Rollout = &appv1.RolloutSpec{AutoRollback: ptr.To(false)}
		}, false},
		{"a progress deadline: not the template", func(a *appv1.App) {
			a.Spec.Rollout = &appv1.RolloutSpec{ProgressDeadlineSeconds: ptr.To(int32(60))}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.changes, hash(tc.mutate) != same)
		})
	}
}

func TestAReplicaSetsTemplateHashesAsItsDeploymentsTemplate(t *testing.T) {
	d := desired.For(app(), desired.Options{}).Deployment
	rs := d.Spec.Template.DeepCopy()
	rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "5d8f7c9b7"
	require.Equal(t, desired.TemplateHash(&d.Spec.Template), desired.TemplateHash(rs))
	require.Equal(t, "5d8f7c9b7", rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey], "the ReplicaSet's template is left as it was")

	restored := desired.WithoutReplicaSetLabel(rs)
	require.Equal(t, d.Spec.Template, *restored)
}
