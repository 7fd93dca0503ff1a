package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/test/localcluster"
)

// sampleImage is the sample workload, which the real node pulls from the cluster's registry.
const sampleImage = "quay.io/mycompany/app-operator-sample:v1.0.0"

// sample reads the v1 sample App that ships in the bundle's examples: its pods run the sample
// workload on the real node.
func sample(t *testing.T, ns string) *appv1.App {
	t.Helper()
	app, err := localcluster.SampleApp(ns)
	require.NoError(t, err)
	return app
}

// fakeSample is the sample App with its pods on kwok's fake nodes, for what need not really run.
func fakeSample(t *testing.T, ns string) *appv1.App {
	app := sample(t, ns)
	localcluster.OnFakeNodes(&app.Spec)
	return app
}

func TestTheSampleAppBecomesAvailable(t *testing.T) {
	ctx := context.Background()
	app := sample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)

	got := AssertAppAvailable(t, key, *app.Spec.Replicas)
	require.Equal(t, *app.Spec.Replicas, got.Status.AvailableReplicas)
	require.Equal(t, app.Spec.Image, got.Status.Image)
	require.Equal(t, app.Name, got.Status.ServiceName)

	// The Deployment's pods run the sample workload on the real node, and its Service answers.
	pods := &corev1.PodList{}
	require.NoError(t, cluster.Client.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels(desired.SelectorLabels(app))))
	require.Len(t, pods.Items, int(*app.Spec.Replicas))
	for _, p := range pods.Items {
		require.Equal(t, corev1.PodRunning, p.Status.Phase, p.Name)
		require.Equal(t, cluster.NodeName(), p.Spec.NodeName, "%s runs on the real node", p.Name)
		require.Zero(t, p.Status.ContainerStatuses[0].RestartCount, p.Name)
	}
	d := &appsv1.Deployment{}
	require.NoError(t, cluster.Client.Get(ctx, key, d))
	require.True(t, metav1.IsControlledBy(d, got))
	svc := &corev1.Service{}
	require.NoError(t, cluster.Client.Get(ctx, key, svc))
	require.True(t, metav1.IsControlledBy(svc, got))
	eventually(t, time.Minute, func(c *assert.CollectT) {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port))
		require.NoError(c, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(c, http.StatusOK, resp.StatusCode)
		require.Contains(c, string(body), "Hello from "+app.Name+"-", "a pod of the App answers through its Service")
	}, "the App's Service to answer")

	// kubectl's columns, by the App's full resource name, which no other project's short
	// names shadow.
	eventually(t, 30*time.Second, func(c *assert.CollectT) {
		out, err := kubectl(t, "get", "apps.mycompany.com", "-n", key.Namespace, "-o", "wide")
		require.NoError(c, err, out)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(c, lines, 2, out)
		header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
		require.Equal(c, []string{"NAME", "IMAGE", "DESIRED", "AVAILABLE", "READY", "REASON", "AGE"}, header)
		replicas := fmt.Sprint(*app.Spec.Replicas)
		require.Equal(c, []string{app.Name, app.Spec.Image, replicas, replicas, "True", "Reconciled"}, row[:len(row)-1], out)
	}, "kubectl get apps -o wide to show the App rolled out")
}

func TestKubectlScaleScalesTheApp(t *testing.T) {
	app := fakeSample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(context.Background(), app))
	key := client.ObjectKeyFromObject(app)
	AssertAppAvailable(t, key, *app.Spec.Replicas)

	out, err := kubectl(t, "scale", "-n", key.Namespace, "app/"+key.Name, "--replicas=4")
	require.NoError(t, err, out)
	AssertAppAvailable(t, key, 4)
	d := &appsv1.Deployment{}
	require.NoError(t, cluster.Client.Get(context.Background(), key, d))
	require.Equal(t, int32(4), *d.Spec.Replicas)
}

func TestAnImageChangeRollsOut(t *testing.T) {
	ctx := context.Background()
	app := fakeSample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)
	AssertAppAvailable(t, key, *app.Spec.Replicas)

	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Image = "nginxinc/nginx-unprivileged:1.28"
	require.NoError(t, cluster.Client.Patch(ctx, app, patch))

	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		got := &appv1.App{}
		require.NoError(c, cluster.Client.Get(ctx, key, got))
		require.Equal(c, "nginxinc/nginx-unprivileged:1.28", got.Status.Image)
	}, "the new image to roll out")
	got := AssertAppAvailable(t, key, *app.Spec.Replicas)
	require.Equal(t, *app.Spec.Replicas, got.Status.UpdatedReplicas)
	d := &appsv1.Deployment{}
	require.NoError(t, cluster.Client.Get(ctx, key, d))
	require.Equal(t, "nginxinc/nginx-unprivileged:1.28", d.Spec.Template.Spec.Containers[0].Image)
}

func TestDeletingAnAppRemovesItsWorkload(t *testing.T) {
	ctx := context.Background()
	app := fakeSample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(ctx, app))
	key := client.ObjectKeyFromObject(app)
	AssertAppAvailable(t, key, *app.Spec.Replicas)

	require.NoError(t, cluster.Client.Delete(ctx, app))
	// kube-controller-manager's garbage collector follows the ownerReferences.
	eventually(t, 2*time.Minute, func(c *assert.CollectT) {
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
			err := cluster.Client.Get(ctx, key, obj)
			require.Truef(c, apierrors.IsNotFound(err), "%T still exists (%v)", obj, err)
		}
		pods := &corev1.PodList{}
		require.NoError(c, cluster.Client.List(ctx, pods, client.InNamespace(key.Namespace)))
		require.Empty(c, pods.Items)
	}, "the garbage collector to remove the App's children")
}
