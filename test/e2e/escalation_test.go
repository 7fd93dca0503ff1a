package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// user is a client acting as a user who holds rules in namespace ns, and nothing else.
func user(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) client.Client {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	require.NoError(t, cluster.Client.Create(ctx, role))
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}}}
	require.NoError(t, cluster.Client.Create(ctx, binding))
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: cluster.Client.Scheme()})
	require.NoError(t, err)
	return c
}

var appsRule = rbacv1.PolicyRule{APIGroups: []string{appv1.GroupVersion.Group}, Resources: []string{"apps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}

// Whoever may write Apps but not Deployments, or not use a ServiceAccount, gets neither
// through an App: the webhook refuses it naming the field and the permission. Whoever holds
// both is admitted.
func TestAnAppGrantsNoRightsItsAuthorLacks(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	require.NoError(t, cluster.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"}}))

	appsOnly := user(t, ns, "e2e-apps-only", appsRule)
	deployer := user(t, ns, "e2e-deployer", appsRule,
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"use"}, ResourceNames: []string{"runner"}})
	refused := func(c client.Client, app *appv1.App, want string) {
		t.Helper()
		// RBAC reaches the API server's authorizer through its informers, a moment after the
		// write: until then the API server itself refuses the user any App.
		eventually(t, 10*time.Second, func(collect *assert.CollectT) {
			err := c.Create(ctx, app.DeepCopy())
			require.True(collect, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
			require.Contains(collect, err.Error(), want)
		}, "the webhook to refuse "+app.Name)
	}

	refused(appsOnly, fakeSample(t, ns), `spec: Forbidden: "e2e-apps-only" may not create deployments.apps in namespace `+ns)
	other := fakeSample(t, ns)
	other.Spec.ServiceAccountName = "builder"
	refused(deployer, other, `spec.serviceAccountName: Forbidden: "e2e-deployer" may not use serviceaccounts builder in namespace `+ns)

	mine := fakeSample(t, ns)
	mine.Spec.ServiceAccountName = "runner"
	require.NoError(t, deployer.Create(ctx, mine))
	AssertAppAvailable(t, client.ObjectKeyFromObject(mine), *mine.Spec.Replicas)
}
