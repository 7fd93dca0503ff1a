package bundle

import (
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestGrantListsEachRuleOncePerServiceAccount(t *testing.T) {
	sar := rbacv1.PolicyRule{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}}
	token := rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}
	apps := rbacv1.PolicyRule{APIGroups: []string{"mycompany.com"}, Resources: []string{"apps"}, Verbs: []string{"get"}}
	type perms = []operatorsv1alpha1.StrategyDeploymentPermissions
	for _, tc := range []struct {
		name    string
		have    perms
		account string
		rules   []rbacv1.PolicyRule
		want    perms
	}{
		{"a first account", nil, "manager", []rbacv1.PolicyRule{sar},
			perms{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{sar}}}},
		{"a rule another role granted already", perms{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{sar}}}, "manager", []rbacv1.PolicyRule{token, sar},
			perms{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{sar, token}}}},
		{"the same rule for another account", perms{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{sar}}}, "other", []rbacv1.PolicyRule{sar, apps},
			perms{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{sar}}, {ServiceAccountName: "other", Rules: []rbacv1.PolicyRule{sar, apps}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, grant(tc.have, tc.account, tc.rules))
		})
	}
}
