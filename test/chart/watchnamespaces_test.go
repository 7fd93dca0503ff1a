package chart_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mycompany/app-operator/test/chart"
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
		env    []corev1.EnvVar
		served []string
	}{
		"every namespace": {objs: everywhere, served: all},
		"two namespaces": {objs: scoped, served: targets,
			env: []corev1.EnvVar{{Name: "APP_OPERATOR_WATCH_NAMESPACES", Value: "team-a,team-b"}}},
	} {
		t.Run(name, func(t *testing.T) {
			containers := find[appsv1.Deployment](t, tc.objs, "Deployment").Spec.Template.Spec.Containers
			require.Equal(t, []string{"manager", "webhooks"}, []string{containers[0].Name, containers[1].Name})
			assert.Equal(t, tc.env, watchEnv(containers[0].Env), "the reconciler's")
			assert.Empty(t, watchEnv(containers[1].Env), "the webhooks' container serves whatever its configurations send")

			var selectors []*metav1.LabelSelector
			for _, w := range find[admissionregistrationv1.MutatingWebhookConfiguration](t, tc.objs, "MutatingWebhookConfiguration").Webhooks {
				selectors = append(selectors, w.NamespaceSelector)
			}
			for _, w := range find[admissionregistrationv1.ValidatingWebhookConfiguration](t, tc.objs, "ValidatingWebhookConfiguration").Webhooks {
				selectors = append(selectors, w.NamespaceSelector)
			}
			require.NotEmpty(t, selectors)
			for _, s := range selectors {
				for _, ns := range all {
					assert.Equal(t, slices.Contains(tc.served, ns), admits(t, s, ns), "a webhook admits Apps in %s", ns)
				}
			}

			clusterWide, bound := managerRuleBindings(t, tc.objs)
			for _, ns := range all {
				assert.Equal(t, slices.Contains(tc.served, ns), clusterWide || slices.Contains(bound, ns),
					"the manager may touch Apps and their workloads in %s", ns)
			}
		})
	}
	assert.ElementsMatch(t, otherBindings(t, everywhere), otherBindings(t, scoped), "every other binding as in the release for every namespace")
}

// watchEnv is the environment variable of the watched namespaces, if env has it.
func watchEnv(env []corev1.EnvVar) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		if e.Name == "APP_OPERATOR_WATCH_NAMESPACES" {
			out = append(out, e)
		}
	}
	return out
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

// managerRuleBindings says where the manager's ServiceAccount is bound to the ClusterRole of
// its rules for Apps and their workloads: cluster-wide, and in which namespaces.
func managerRuleBindings(t *testing.T, objs []*unstructured.Unstructured) (clusterWide bool, namespaces []string) {
	t.Helper()
	for _, b := range bindings(t, objs) {
		switch {
		case b.RoleRef != managerRule || !bindsManager(b.Subjects):
		case b.Namespace == "":
			clusterWide = true
		default:
			namespaces = append(namespaces, b.Namespace)
		}
	}
	return clusterWide, namespaces
}

// managerRule is the ClusterRole of the manager's rules for Apps and their workloads.
var managerRule = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "app-operator-manager-role"}

// otherBindings are the bindings of roles other than the manager's rules for Apps and their
// workloads, as kind, namespace and role.
func otherBindings(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, b := range bindings(t, objs) {
		if b.RoleRef != managerRule {
			out = append(out, b.Kind+" "+b.Namespace+" "+b.RoleRef.Kind+"/"+b.RoleRef.Name)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func bindsManager(subjects []rbacv1.Subject) bool {
	return slices.Equal(subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "app-operator-controller-manager", Namespace: namespace}})
}
