package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// TestUninstallingLeavesAppsAndWorkloadsUntouched uninstalls the operator as a user does, then
// installs it again for the tests that follow.
func TestUninstallingLeavesAppsAndWorkloadsUntouched(t *testing.T) {
	ctx := context.Background()
	app := fakeSample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)
	AssertAppAvailable(t, key, *app.Spec.Replicas)

	objects := []client.Object{&apiextensionsv1.CustomResourceDefinition{}, &appv1.App{}, &appsv1.Deployment{}, &corev1.Service{}}
	keys := []client.ObjectKey{{Name: "apps.mycompany.com"}, key, key, key}
	versions := func() []string {
		var rvs []string
		for i, o := range objects {
			require.NoError(t, cluster.Client.Get(ctx, keys[i], o))
			rvs = append(rvs, o.GetResourceVersion())
		}
		return rvs
	}
	before := versions()

	require.NoError(t, cluster.Uninstall(ctx))
	require.NoError(t, cluster.Poll(ctx, time.Minute, "the manager to stop with its Deployment", func(ctx context.Context) (bool, error) {
		managers, _, err := cluster.Managers(ctx)
		return len(managers) == 0, err
	}))
	time.Sleep(5 * time.Second) // time for anything that would touch them
	after := versions()
	require.Equal(t, before[1:], after[1:], "the App and its workload are untouched")
	crd := objects[0].(*apiextensionsv1.CustomResourceDefinition)
	require.NotEmpty(t, crd.Spec.Versions, "the CRD stays")

	require.NoError(t, subscribe(ctx), "installing again")
	AssertAppAvailable(t, key, *app.Spec.Replicas)
}
