package storagemigration_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/api/v1alpha1"
	"github.com/mycompany/app-operator/internal/envtest"
	"github.com/mycompany/app-operator/internal/metrics"
	"github.com/mycompany/app-operator/internal/storagemigration"
)

var env *envtest.Environment

func TestMain(m *testing.M) { os.Exit(envtest.Run(m, &env)) }

// setStorage makes version the CRD's storage version, and served, as every release that stored
// it served it, optionally dropping the other version.
func setStorage(t *testing.T, version string, drop bool) {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: storagemigration.CRDName}}
	env.Update(t, crd, func() {
		var versions []apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range crd.Spec.Versions {
			v.Storage = v.Name == version
			v.Served = v.Served || v.Storage
			if !drop || v.Storage {
				versions = append(versions, v)
			}
		}
		crd.Spec.Versions = versions
	})
}

func storedVersions(t *testing.T) []string {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: storagemigration.CRDName}, crd))
	return crd.Status.StoredVersions
}

func TestAppsStoredAsV1alpha1AreMigratedToV1(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)

	// As release 0.1.0 left things: Apps stored as v1alpha1, some with v1-only fields.
	setStorage(t, "v1alpha1", false)
	var want []appv1.App
	for i := range 12 {
		if i%2 == 0 {
			old := &v1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("old-%d", i)},
				Spec: v1alpha1.AppSpec{Image: "nginx:1.27", Replicas: ptr.To(int32(i))}}
			// The API server serves v1alpha1 once its discovery shows it.
			envtest.Eventually(t, func(c *require.Assertions) { c.NoError(env.Client.Create(ctx, old)) }, "a v1alpha1 App to be created")
		} else {
			app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("new-%d", i)},
				Spec: appv1.AppSpec{Image: "nginx:1.27", Args: []string{"--n", fmt.Sprint(i)},
					Autoscaling: &appv1.AutoscalingSpec{MaxReplicas: int32(i + 1)}}}
			require.NoError(t, env.Client.Create(ctx, app))
		}
	}
	// Let the writers settle, so that the migration below is the only one to write the Apps:
	// the operator has reported on each App, and has trimmed the v1 the CRD listed before.
	var apps appv1.AppList
	envtest.Eventually(t, func(c *require.Assertions) {
		c.NoError(env.Client.List(ctx, &apps, client.InNamespace(ns)))
		for _, a := range apps.Items {
			c.Equal(a.Generation, a.Status.ObservedGeneration, "the status of %s", a.Name)
		}
		c.Equal([]string{"v1alpha1"}, storedVersions(t))
	}, "the operator to report on every App and migrate to v1alpha1")
	envtest.WaitIdle(t)
	require.NoError(t, env.Client.List(ctx, &apps, client.InNamespace(ns)))
	want = apps.Items
	stored := func(a appv1.App) string {
		return env.StoredAPIVersion(t, "/registry/mycompany.com/apps/"+ns+"/"+a.Name)
	}
	for _, a := range want {
		require.Equal(t, "mycompany.com/v1alpha1", stored(a), a.Name)
	}
	migrated := testutil.ToFloat64(metrics.MigratedApps)

	// Release 0.2.0's CRD stores v1; its operator rewrites every App and trims storedVersions.
	setStorage(t, "v1", false)
	envtest.Eventually(t, func(c *require.Assertions) {
		c.Equal([]string{"v1"}, storedVersions(t))
	}, "the migration to trim storedVersions")
	require.Equal(t, float64(len(want)), testutil.ToFloat64(metrics.MigratedApps)-migrated, "the migration counts each App it rewrote")
	for _, a := range want {
		require.Equal(t, "mycompany.com/v1", stored(a), a.Name)
	}

	// Nothing needs v1alpha1 any more: a CRD without it still reads every App, unchanged.
	setStorage(t, "v1", true)
	require.NoError(t, env.Client.List(ctx, &apps, client.InNamespace(ns)))
	require.Len(t, apps.Items, len(want))
	for i := range want {
		require.Equal(t, want[i].Spec, apps.Items[i].Spec, want[i].Name)
		require.Equal(t, want[i].Generation, apps.Items[i].Generation, "the rewrite changes no spec")
	}
}
