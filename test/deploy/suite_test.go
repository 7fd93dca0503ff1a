// Package deploy installs App Operator without OLM on fresh local clusters, as users do: with
// its Helm chart (install, upgrade, rollback, uninstall) and with make deploy (kustomize).
// Each test pushes the releases' images to the cluster's registry, where the real node pulls
// them by the names users pull them by, and runs the sample App on the real node.
package deploy

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/test/localcluster"
)

var root = localcluster.RepoRoot()

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "deploy", nil)) }

// startCluster starts a fresh cluster for the test, with every release's images pushed.
func startCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	ctx := context.Background()
	rel, err := localcluster.BuildReleases(ctx, root)
	require.NoError(t, err)
	c := localcluster.StartForTest(t, "deploy")
	require.NoError(t, c.PushImages(ctx, rel))
	return c
}

// runSample creates the sample App in namespace ns, through the webhooks, once they answer,
// and waits until it is Available on the real node. It returns the App as the defaulting
// webhook left it.
func runSample(t *testing.T, c *localcluster.Cluster, ns string) *appv1.App {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.WaitForWebhooks(ctx))
	require.NoError(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	app, err := localcluster.SampleApp(ns)
	require.NoError(t, err)
	require.NoError(t, c.Client.Create(ctx, app))
	require.NotNil(t, app.Spec.Service.Enabled, "the defaulting webhook answered")
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), 3*time.Minute))
	return app
}

// scale sets an App's replicas, through the webhooks, once they answer, and waits until it is
// Available with them.
func scale(t *testing.T, c *localcluster.Cluster, app *appv1.App, replicas int32) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.WaitForWebhooks(ctx))
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Replicas = &replicas
	require.NoError(t, c.Client.Patch(ctx, app, patch))
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), 3*time.Minute))
}

// podTemplate is the pod template of the App's Deployment: what must not change while App
// Operator is upgraded, rolled back or removed.
func podTemplate(t *testing.T, c *localcluster.Cluster, app *appv1.App) corev1.PodTemplateSpec {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, c.Client.Get(context.Background(), client.ObjectKeyFromObject(app), d))
	return d.Spec.Template
}

// managerArgs are the arguments of the manager's reconciler container.
func managerArgs(t *testing.T, c *localcluster.Cluster, key client.ObjectKey) []string {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, c.Client.Get(context.Background(), key, d))
	return d.Spec.Template.Spec.Containers[0].Args
}
