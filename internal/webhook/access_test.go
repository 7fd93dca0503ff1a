package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/envtest"
)

// grant gives user the rule in namespace ns, and waits until the API server's authorizer
// knows it.
func grant(t *testing.T, ns, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	name := user + "-" + rule.Resources[0]
	require.NoError(t, env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}}))
	require.NoError(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}))
	envtest.Eventually(t, func(r *require.Assertions) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: rule.Resources[0], Name: strings.Join(rule.ResourceNames, "")}}}
		r.NoError(env.Client.Create(ctx, review))
		r.True(review.Status.Allowed, "the grant of %s to %s is in force", name, user)
	})
}

// An App runs pods with the operator's rights; its requester must hold the rights it uses.
func TestAnAppNeedsTheRightsOfWhatItRuns(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	user := env.User(t, "alice")
	grant(t, ns, "alice", rbacv1.PolicyRule{APIGroups: []string{appv1.GroupVersion.Group}, Resources: []string{"apps"}, Verbs: []string{"create", "get", "update", "patch"}})
	app := func(account string) *appv1.App {
		return &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appv1.AppSpec{Image: "nginx:1.27", ServiceAccountName: account}}
	}

	err := user.Create(ctx, app(""))
	require.Truef(t, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
	require.Contains(t, err.Error(), `spec: Forbidden: "alice" may not create deployments.apps in namespace `+ns)
	require.True(t, apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(app("")), &appv1.App{})), "a refused App is not stored")

	grant(t, ns, "alice", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "update"}})
	err = user.Create(ctx, app("deployer"))
	require.Truef(t, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
	require.Contains(t, err.Error(), `spec.serviceAccountName: Forbidden: "alice" may not use serviceaccounts deployer in namespace `+ns)
	require.NotContains(t, err.Error(), "deployments.apps", "only the missing permission is named")

	require.NoError(t, user.Create(ctx, app("")), "with the right to create Deployments, as the default account")

	// Another user may edit Apps but not Deployments: not even the image of one that exists.
	other := env.User(t, "bob")
	grant(t, ns, "bob", rbacv1.PolicyRule{APIGroups: []string{appv1.GroupVersion.Group}, Resources: []string{"apps"}, Verbs: []string{"get", "update", "patch"}})
	var stored appv1.App
	require.NoError(t, other.Get(ctx, client.ObjectKeyFromObject(app("")), &stored))
	// Merge patches, which carry no resourceVersion: the operator writes the status meanwhile.
	unchanged := stored.DeepCopy()
	stored.Spec.Image = "nginx:1.28"
	err = other.Patch(ctx, &stored, client.MergeFrom(unchanged))
	require.Truef(t, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
	require.Contains(t, err.Error(), `"bob" may not update deployments.apps`)
	stored = *unchanged.DeepCopy()
	stored.Labels = map[string]string{"team": "shop"}
	require.NoError(t, other.Patch(ctx, &stored, client.MergeFrom(unchanged)), "a change outside the spec needs no rights over what the App runs")

	grant(t, ns, "alice", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"deployer"}, Verbs: []string{"use"}})
	withAccount := app("deployer")
	withAccount.Name = "worker"
	require.NoError(t, user.Create(ctx, withAccount), "with the right to use the ServiceAccount")
}
