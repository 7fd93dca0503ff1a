package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	appwebhook "github.com/mycompany/app-operator/internal/webhook"
	"github.com/mycompany/app-operator/test/localcluster"
)

// can asks the API server whether the operator's ServiceAccount may do something.
func can(t *testing.T, verb, group, resource, namespace, name string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   manager(t).ServiceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + localcluster.OperatorsNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Namespace: namespace, Name: name},
	}}
	require.NoError(t, cluster.Client.Create(context.Background(), sar))
	return sar.Status.Allowed
}

func TestTheOperatorCannotReadSecretsOrTouchWhatItDoesNotManage(t *testing.T) {
	for _, verb := range []string{"get", "list", "watch"} {
		require.False(t, can(t, verb, "", "secrets", "", ""), "%s secrets cluster-wide", verb)
		require.False(t, can(t, verb, "", "secrets", localcluster.OperatorsNamespace, ""), "%s secrets in its namespace", verb)
	}
	// Of Secrets, it may only patch the one OLM keeps the webhooks' certificate in.
	require.True(t, can(t, "patch", "", "secrets", localcluster.OperatorsNamespace, appwebhook.CertificateSecret))
	require.False(t, can(t, "patch", "", "secrets", localcluster.OperatorsNamespace, "another"), "patch another Secret")
	require.False(t, can(t, "patch", "", "secrets", localcluster.OperatorsNamespace, ""), "patch any Secret")
	for _, r := range []struct{ verb, group, resource, name string }{
		{"update", "", "configmaps", ""}, {"delete", "", "pods", ""}, {"create", "", "pods", ""},
		{"patch", "apps", "replicasets", ""}, {"delete", "", "namespaces", ""}, {"patch", "", "nodes", ""},
		{"create", "rbac.authorization.k8s.io", "clusterrolebindings", ""},
		{"patch", "apiextensions.k8s.io", "customresourcedefinitions", "subscriptions.operators.coreos.com"},
		{"get", "apiextensions.k8s.io", "customresourcedefinitions", "subscriptions.operators.coreos.com"},
		{"update", "mycompany.com", "apps", ""}, {"patch", "mycompany.com", "apps", ""}, {"delete", "mycompany.com", "apps", ""},
		{"patch", "apiextensions.k8s.io", "customresourcedefinitions/status", "apps.mycompany.com"},
	} {
		require.False(t, can(t, r.verb, r.group, r.resource, "default", r.name), "%+v", r)
	}
	// What it needs, it has.
	require.True(t, can(t, "patch", "apps", "deployments", "default", ""))
	require.True(t, can(t, "patch", "mycompany.com", "apps/status", "default", ""))
	require.True(t, can(t, "get", "apiextensions.k8s.io", "customresourcedefinitions", "", "apps.mycompany.com"))
}

// An object that another controller owns keeps its content when an App wants its name.
func TestAnAppNeverTakesOverAnotherControllersObject(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	require.NoError(t, cluster.Client.Create(ctx, owner))
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53}}, Selector: map[string]string{"app": "dns"}},
	}
	require.NoError(t, cluster.Client.Create(ctx, foreign))

	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appv1.AppSpec{Image: "nginx:1.27"}}
	localcluster.OnFakeNodes(&app.Spec)
	require.NoError(t, cluster.Client.Create(ctx, app))
	eventually(t, time.Minute, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(app), app))
		d := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
		require.NotNil(c, d)
		require.Equal(c, metav1.ConditionTrue, d.Status)
		require.Contains(c, d.Message, "Service "+ns+"/web already exists and is not controlled by this App")
	}, "the App to report the Service it cannot have")
	after := &corev1.Service{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKeyFromObject(foreign), after))
	require.Equal(t, foreign.ResourceVersion, after.ResourceVersion, "the foreign Service is untouched")
}

func TestMetricsNeedAuthorization(t *testing.T) {
	ctx := context.Background()
	url := manager(t).MetricsURL
	get := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, _ := get("")
	require.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "anonymous")

	ns := namespace(t)
	token := func(name string, bind bool) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		require.NoError(t, cluster.Client.Create(ctx, sa))
		if bind {
			crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "app-operator-metrics-reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
			require.NoError(t, cluster.Client.Create(ctx, crb))
			t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), crb) })
		}
		cs, err := kubernetes.NewForConfig(cluster.Config)
		require.NoError(t, err)
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	code, _ = get(token("stranger", false))
	require.Equal(t, http.StatusForbidden, code, "a ServiceAccount without the metrics-reader role")

	reader := token("prometheus", true)
	eventually(t, 30*time.Second, func(c *assert.CollectT) {
		code, body := get(reader)
		require.Equal(c, http.StatusOK, code)
		require.Contains(c, body, "operator_reconcile_count{controller=\"app\"}")
		require.Contains(c, body, "operator_app_condition")
	}, "the metrics-reader to scrape")
}

func TestTheWebhookServerRefusesOldTLSAndHTTP2(t *testing.T) {
	addr := manager(t).WebhookAddr
	_, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}) //nolint:gosec
	require.Error(t, err, "TLS 1.1")
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	require.Equal(t, "http/1.1", conn.ConnectionState().NegotiatedProtocol, "HTTP/2 is off")
}

// Every log line about an App carries its namespace, its name and the reconcile ID, in JSON.
func TestLogsAreStructured(t *testing.T) {
	app := sample(t, namespace(t))
	require.NoError(t, cluster.Client.Create(context.Background(), app))
	AssertAppAvailable(t, client.ObjectKeyFromObject(app), *app.Spec.Replicas)

	m := manager(t)
	log, err := cluster.Logs(context.Background(), m.Pod, "manager")
	require.NoError(t, err)
	about := 0
	s := bufio.NewScanner(strings.NewReader(log))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "{") {
			continue // what the Go runtime and standard library print themselves
		}
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), line)
		require.Contains(t, entry, "level")
		require.Contains(t, entry, "msg")
		if entry["controller"] == "app" && entry["name"] == app.Name {
			about++
			for _, key := range []string{"namespace", "name", "reconcileID"} {
				require.Contains(t, entry, key, line)
			}
		}
	}
	require.Positive(t, about, "the manager logs what it does to an App")
}
