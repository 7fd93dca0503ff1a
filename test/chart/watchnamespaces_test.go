package chart_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mycompany/app-operator/test/chart"
	"github.com/mycompany/app-operator/test/localcluster"
)

// TestWatchNamespacesScopeTheWebhooksTheControllersAndTheRights renders a release for two
// namespaces and one for every namespace. Scoped, the manager caches and reconciles the two
// (the environment variable OLM's bundle fills from its OperatorGroup), the webhooks admit
// Apps there only, and the manager's rules for Apps and their workloads are bound there only;
// what it needs cluster-wide or in its own namespace is bound as in the default release.
func TestWatchNamespacesScopeTheWebhooksTheControllersAndTheRights(t *testing.T) {
	targets := []string{"team-a", "team-b"}
	all := append(slices.Clone(targets), namespace, "default", "team-c")
	everywhere, everywhereNotes, err := chart.Render(nil, namespace)
	require.NoError(t, err)
	scoped, notes, err := chart.Render(map[string]any{"watchNamespaces": []any{"team-a", "team-b"}}, namespace)
	require.NoError(t, err)
	assert.Contains(t, notes, "It serves the Apps of team-a, team-b only")
	assert.Contains(t, notes, "kubectl -n team-a apply -f -", "the example App goes where it is served")
	assert.NotContains(t, everywhereNotes, "It serves the Apps of")
	assert.Contains(t, everywhereNotes, "kubectl apply -f -")

	for name, tc := range map[string]struct {
		objs   []*unstructured.Unstructured
		watch  string
		served []string
	}{
		"every namespace": {objs: everywhere, served: all},
		"two namespaces":  {objs: scoped, served: targets, watch: "team-a,team-b"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := localcluster.ServedBy(tc.objs, namespace)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"manager": tc.watch, "webhooks": ""}, s.WatchNamespaces,
				"the reconciler is told; the webhooks' container serves whatever its configurations send")
			require.NotEmpty(t, s.Selectors)
			for hook, selector := range s.Selectors {
				for _, ns := range all {
					assert.Equal(t, slices.Contains(tc.served, ns), admits(t, selector, ns), "webhook %s admits Apps in %s", hook, ns)
				}
			}
			for _, ns := range all {
				assert.Equal(t, slices.Contains(tc.served, ns), slices.Contains(s.RulesBoundIn, "*") || slices.Contains(s.RulesBoundIn, ns),
					"the manager may touch Apps and their workloads in %s", ns)
			}
		})
	}
	assert.ElementsMatch(t, otherBindings(t, everywhere), otherBindings(t, scoped), "every other binding as in the release for every namespace")
}

// admits says whether a webhook's namespace selector selects namespace ns, as the API server
// reads it: an absent selector selects every namespace, and every namespace is labelled with
// its name.
func admits(t *testing.T, s *metav1.LabelSelector, ns string) bool {
	t.Helper()
	if s == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	require.NoError(t, err)
	return sel.Matches(labels.Set{corev1.LabelMetadataName: ns})
}

// bindings are the rendered RoleBindings and ClusterRoleBindings, each as a RoleBinding (of
// its own kind): a ClusterRoleBinding's has no namespace.
func bindings(t *testing.T, objs []*unstructured.Unstructured) []*rbacv1.RoleBinding {
	t.Helper()
	var out []*rbacv1.RoleBinding
	for _, o := range objs {
		if o.GetKind() == "RoleBinding" || o.GetKind() == "ClusterRoleBinding" {
			out = append(out, convert[rbacv1.RoleBinding](t, o))
		}
	}
	return out
}

// otherBindings are the bindings of roles other than the manager's rules for Apps and their
// workloads, as kind, namespace and role.
func otherBindings(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, b := range bindings(t, objs) {
		if b.RoleRef != localcluster.ManagerRule {
			out = append(out, b.Kind+" "+b.Namespace+" "+b.RoleRef.Kind+"/"+b.RoleRef.Name)
		}
	}
	require.NotEmpty(t, out)
	return out
}
