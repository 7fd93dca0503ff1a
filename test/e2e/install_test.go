package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/test/localcluster"
)

func TestOLMInstallsTheOperatorFromTheCatalog(t *testing.T) {
	ctx := context.Background()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: headCSV()}, csv))
	require.Equal(t, operatorsv1alpha1.CSVPhaseSucceeded, csv.Status.Phase)

	// The CRD has one version, and so no conversion webhook: that is what lets OLM install
	// the operator for some namespaces only (test/installmodes).
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd))
	require.Len(t, crd.Spec.Versions, 1)
	require.Equal(t, apiextensionsv1.NoneConverter, crd.Spec.Conversion.Strategy)
	for _, m := range csv.Spec.InstallModes {
		require.True(t, m.Supported, "install mode %s", m.Type)
	}
	require.Equal(t, []string{"v1"}, crd.Status.StoredVersions)
}

// App Operator says it runs on a cluster without a way out, as this one is: the node reaches
// no public registry and pulls quay.io from a mirror. What OLM runs is named by digest and
// listed in the ClusterServiceVersion's relatedImages, which mirroring tools copy, and the node
// pulled exactly those digests.
func TestWhatRunsIsWhatAMirrorOfTheRelatedImagesHolds(t *testing.T) {
	ctx := context.Background()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: headCSV()}, csv))
	require.Equal(t, "true", csv.Annotations[image.DisconnectedAnnotation])
	require.NoError(t, image.RunsDisconnected(csv))
	related := map[string]bool{}
	for _, r := range csv.Spec.RelatedImages {
		related[r.Image] = true
	}

	managers, _, err := cluster.Managers(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, managers)
	for _, m := range managers {
		pod := m.Pod
		images := map[string]string{}
		for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
			images[c.Name] = c.Image
		}
		statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
		require.Len(t, statuses, len(images), "pod %s", pod.Name)
		for _, s := range statuses {
			ref := images[s.Name]
			require.True(t, related[ref], "pod %s container %s runs %s, which relatedImages does not list", pod.Name, s.Name, ref)
			_, digest, _ := strings.Cut(ref, "@")
			require.True(t, strings.HasSuffix(s.ImageID, "@"+digest), "pod %s container %s: the node pulled %s for %s", pod.Name, s.Name, s.ImageID, ref)
		}
	}
}

// The install runs two managers, spread across nodes and kept by a PodDisruptionBudget, and
// admits traffic to their webhooks and metrics only.
func TestTheInstallIsHighlyAvailableAndFenced(t *testing.T) {
	ctx := context.Background()
	ns := localcluster.OperatorsNamespace
	d := &appsv1.Deployment{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: localcluster.DeploymentName}, d))
	require.Equal(t, int32(2), *d.Spec.Replicas)
	require.Equal(t, int32(2), d.Status.AvailableReplicas)
	require.Equal(t, intstr.FromInt32(0), *d.Spec.Strategy.RollingUpdate.MaxUnavailable, "a rollout never takes a manager away first")
	var containers []string
	for _, c := range d.Spec.Template.Spec.Containers {
		containers = append(containers, c.Name)
	}
	require.Equal(t, []string{"manager", "webhooks"}, containers, "the controllers and the webhooks, apart")
	spread := d.Spec.Template.Spec.TopologySpreadConstraints
	require.Len(t, spread, 1)
	require.Equal(t, corev1.LabelHostname, spread[0].TopologyKey)

	pdb := &policyv1.PodDisruptionBudget{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: localcluster.DeploymentName}, pdb))
	require.Equal(t, intstr.FromInt32(1), *pdb.Spec.MinAvailable)
	require.Equal(t, d.Spec.Selector, pdb.Spec.Selector, "it keeps the managers")
	eventually(t, 30*time.Second, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(pdb), pdb))
		require.Equal(c, int32(1), pdb.Status.DisruptionsAllowed, "one manager may be evicted at a time")
	}, "the PodDisruptionBudget to allow one disruption")

	policies := &networkingv1.NetworkPolicyList{}
	require.NoError(t, cluster.Client.List(ctx, policies, client.InNamespace(ns)))
	ports := map[string][]int32{}
	for _, p := range policies.Items {
		require.Equal(t, d.Spec.Selector.MatchLabels, p.Spec.PodSelector.MatchLabels, p.Name)
		require.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, p.Spec.PolicyTypes, p.Name)
		for _, in := range p.Spec.Ingress {
			for _, port := range in.Ports {
				ports[p.Name] = append(ports[p.Name], port.Port.IntVal)
			}
		}
	}
	require.Equal(t, map[string][]int32{"app-operator-allow-webhook-traffic": {9443}, "app-operator-allow-metrics-traffic": {8443, 8444}}, ports)
}
