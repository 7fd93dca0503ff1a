package localcluster

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Served is what rendered manifests of App Operator (the Helm chart's, make deploy's) say of
// the namespaces it serves.
type Served struct {
	// WatchNamespaces is APP_OPERATOR_WATCH_NAMESPACES of each container of the manager's
	// Deployment, by container: "" where it is not set.
	WatchNamespaces map[string]string
	// Selectors are the webhooks' namespace selectors, by webhook: nil selects every namespace.
	Selectors map[string]*metav1.LabelSelector
	// RulesBoundIn lists where the manager's ServiceAccount is bound to ManagerRule: the
	// namespace of each RoleBinding, sorted, or "*" for a ClusterRoleBinding.
	RulesBoundIn []string
}

// ManagerRule is the ClusterRole of the manager's rules for Apps and their workloads.
var ManagerRule = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "app-operator-manager-role"}

// ServedBy reads what objs serve; the manager runs as ServiceAccount
// app-operator-controller-manager of namespace.
func ServedBy(objs []*unstructured.Unstructured, namespace string) (Served, error) {
	s := Served{WatchNamespaces: map[string]string{}, Selectors: map[string]*metav1.LabelSelector{}}
	manager := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "app-operator-controller-manager", Namespace: namespace}}
	for _, u := range objs {
		switch u.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			if err := convert(u, &d); err != nil {
				return s, err
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				s.WatchNamespaces[c.Name] = ""
				for _, e := range c.Env {
					if e.Name == "APP_OPERATOR_WATCH_NAMESPACES" {
						s.WatchNamespaces[c.Name] = e.Value
					}
				}
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			var c struct { // what both kinds have
				Webhooks []struct {
					Name              string                `json:"name"`
					NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
				} `json:"webhooks"`
			}
			if err := convert(u, &c); err != nil {
				return s, err
			}
			for _, h := range c.Webhooks {
				s.Selectors[h.Name] = h.NamespaceSelector
			}
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields, but the namespace
			if err := convert(u, &b); err != nil {
				return s, err
			}
			switch {
			case b.RoleRef != ManagerRule:
			case !slices.Equal(b.Subjects, manager):
				return s, fmt.Errorf("%s %s binds %s to %v, not the manager's ServiceAccount", u.GetKind(), u.GetName(), b.RoleRef.Name, b.Subjects)
			case u.GetKind() == "ClusterRoleBinding":
				s.RulesBoundIn = append(s.RulesBoundIn, "*")
			default:
				s.RulesBoundIn = append(s.RulesBoundIn, b.Namespace)
			}
		}
	}
	slices.Sort(s.RulesBoundIn)
	return s, nil
}

func convert(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
