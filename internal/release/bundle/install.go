package bundle

import (
	"fmt"
	"slices"
	"sort"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// install fills the CSV's deployment install strategy: the Deployments with the release's
// image, and as permissions the rules of every role bound to their ServiceAccount. Roles bound
// to no one stay manifests of their own.
func (b *Bundle) install(in *inputs, o Options) error {
	accounts := map[string]bool{}
	strategy := operatorsv1alpha1.StrategyDetailsDeployment{}
	for _, d := range in.deployments {
		spec := d.Spec.DeepCopy()
		setManagerImage(spec.Template.Spec.Containers, o.Image)
		strategy.DeploymentSpecs = append(strategy.DeploymentSpecs,
			operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Spec: *spec, Label: d.Labels})
		accounts[spec.Template.Spec.ServiceAccountName] = true
	}

	bound := map[string]bool{}
	for _, rb := range in.bindings {
		binding, err := typed[rbacv1.ClusterRoleBinding](rb) // RoleBinding has the same shape
		if err != nil {
			return err
		}
		for _, s := range binding.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || !accounts[s.Name] {
				continue
			}
			role := in.roles[binding.RoleRef.Kind+"/"+binding.RoleRef.Name]
			if role == nil {
				return fmt.Errorf("%s %s binds %s %s, which is not among the manifests", rb.GetKind(), rb.GetName(), binding.RoleRef.Kind, binding.RoleRef.Name)
			}
			rules, err := typed[rbacv1.ClusterRole](role)
			if err != nil {
				return err
			}
			if rb.GetKind() == "RoleBinding" {
				strategy.Permissions = grant(strategy.Permissions, s.Name, rules.Rules)
			} else {
				strategy.ClusterPermissions = grant(strategy.ClusterPermissions, s.Name, rules.Rules)
			}
			bound[binding.RoleRef.Kind+"/"+binding.RoleRef.Name] = true
		}
	}
	names := make([]string, 0, len(in.roles))
	for name := range in.roles {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !bound[name] {
			b.manifests = append(b.manifests, in.roles[name])
		}
	}
	for _, rb := range in.bindings {
		if !bindsAccount(rb, accounts) {
			b.manifests = append(b.manifests, rb)
		}
	}
	b.csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy,
	}
	return nil
}

// grant adds rules to a ServiceAccount's permissions, one entry per ServiceAccount, each rule
// once: two roles bound to it may both grant one (the webhooks and the metrics endpoint both
// create SubjectAccessReviews).
func grant(perms []operatorsv1alpha1.StrategyDeploymentPermissions, account string, rules []rbacv1.PolicyRule) []operatorsv1alpha1.StrategyDeploymentPermissions {
	i := slices.IndexFunc(perms, func(p operatorsv1alpha1.StrategyDeploymentPermissions) bool { return p.ServiceAccountName == account })
	if i < 0 {
		perms, i = append(perms, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: account}), len(perms)
	}
	for _, r := range rules {
		if !slices.ContainsFunc(perms[i].Rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
			perms[i].Rules = append(perms[i].Rules, r)
		}
	}
	return perms
}

func bindsAccount(rb *unstructured.Unstructured, accounts map[string]bool) bool {
	subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		if m["kind"] == rbacv1.ServiceAccountKind && accounts[fmt.Sprint(m["name"])] {
			return true
		}
	}
	return false
}

// setManagerImage gives the release's image to the container named manager and to every
// container that runs the same image as it: the manager's controllers and its webhooks run
// in two containers of one pod.
func setManagerImage(containers []corev1.Container, image string) {
	base := ""
	for _, c := range containers {
		if c.Name == "manager" {
			base = c.Image
		}
	}
	for i := range containers {
		if containers[i].Name == "manager" || (base != "" && containers[i].Image == base) {
			containers[i].Image = image
		}
	}
}
