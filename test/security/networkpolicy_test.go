package security_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

func TestNetworkPoliciesAdmitOnlyMetricsAndWebhooks(t *testing.T) {
	podLabels := labels.Set(managerFromConfig(t).Spec.Template.Labels)

	// The controllers' metrics on 8443, the webhooks' on 8444, and the webhooks on 9443.
	ports := map[string][]int32{"allow-metrics-traffic.yaml": {8443, 8444}, "allow-webhook-traffic.yaml": {9443}}
	for file, port := range ports {
		raw, err := os.ReadFile(filepath.Join(root, "config", "network-policy", file))
		require.NoError(t, err)
		var np networkingv1.NetworkPolicy
		require.NoError(t, yaml.UnmarshalStrict(raw, &np))
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		require.NoError(t, err)
		require.True(t, sel.Matches(podLabels), "%s selects the manager's pods", file)
		require.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
		require.Len(t, np.Spec.Ingress, 1, file)
		var admitted []int32
		for _, p := range np.Spec.Ingress[0].Ports {
			admitted = append(admitted, p.Port.IntVal)
		}
		require.Equal(t, port, admitted, "%s admits these ports only", file)
	}
}
