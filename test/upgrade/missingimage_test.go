package upgrade

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/release/catalog"
	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestAManagerImageMissingFromTheRegistryIsReported installs a bundle whose manager image, by
// digest, the registry does not hold. OLM creates the Deployment; the node cannot pull the
// image; the ClusterServiceVersion never succeeds. What users see is asserted: the manager
// pod waiting in ErrImagePull or ImagePullBackOff, naming the image, and the CSV's message
// naming the Deployment it waits for.
func TestAManagerImageMissingFromTheRegistryIsReported(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	head := e.rel.Images[e.rel.Head().Version]

	pinned, err := image.ManagerImage(head.PinnedBundle)
	require.NoError(t, err)
	missing := strings.SplitN(pinned, "@", 2)[0] + "@sha256:" + strings.Repeat("0", 64)
	dir := filepath.Join(e.Dir, "missing-manager-bundle")
	require.NoError(t, image.PinDigests(head.PinnedBundle, dir, map[string]string{pinned: missing}))
	bundle, err := e.rel.BundleImage(dir, "missing-manager")
	require.NoError(t, err)
	require.NoError(t, e.Push(ctx, bundle), "the bundle is pushed, its manager is not")
	rendered, err := publish.Render(ctx, filepath.Join(e.Bin, "opm"), bundle)
	require.NoError(t, err)
	catalogDir := filepath.Join(e.Dir, "catalog-missing-manager")
	require.NoError(t, catalog.Add(catalogDir, rendered, []string{localcluster.Channel}, localcluster.Channel, nil))
	require.NoError(t, e.ServeCatalogDir(ctx, e.rel, catalogDir, "missing-manager"))
	require.NoError(t, e.Subscribe(ctx, localcluster.Subscription{}))

	var waiting *corev1.ContainerStateWaiting
	require.NoError(t, e.Poll(ctx, 3*time.Minute, "the manager pod to fail to pull "+missing, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := e.Client.List(ctx, pods, client.InNamespace(localcluster.OperatorsNamespace)); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			for _, s := range p.Status.ContainerStatuses {
				if w := s.State.Waiting; s.Name == "manager" && w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
					waiting = w
					return true, nil
				}
			}
		}
		return false, nil
	}))
	require.Contains(t, waiting.Message, missing, "the pull error names the image")

	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, e.Poll(ctx, 2*time.Minute, "the ClusterServiceVersion to report the Deployment it waits for", func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: head.Release.CSVName()}, csv); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return strings.Contains(csv.Status.Message, localcluster.DeploymentName), nil
	}))
	require.NotEqual(t, operatorsv1alpha1.CSVPhaseSucceeded, csv.Status.Phase, "%s: %s", csv.Status.Reason, csv.Status.Message)
	d := &appsv1.Deployment{}
	require.NoError(t, e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: localcluster.DeploymentName}, d))
	require.Zero(t, d.Status.AvailableReplicas)
	t.Logf("what users see: pod %s: %s; ClusterServiceVersion %s (%s): %s", waiting.Reason, waiting.Message, csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
}
