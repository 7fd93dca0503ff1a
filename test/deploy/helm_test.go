package deploy

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/release/bundle"
	"github.com/mycompany/app-operator/test/chart"
	"github.com/mycompany/app-operator/test/localcluster"
)

const (
	helmNamespace = "app-operator"
	helmRelease   = "app-operator"
	// elsewhere is a namespace the release does not serve while narrowed to the sample's.
	elsewhere = "elsewhere"
)

// TestTheHelmChartInstallsUpgradesRollsBackAndUninstalls takes a release of the chart
// through its life as helm does, the chart pulled from the registry it is published to (helm
// install oci://...): install, then an App Available on the real node; an upgrade
// that changes a flag, rotates the certificate and narrows the release to the App's namespace
// (watchNamespaces), leaving an App elsewhere alone; a rollback, after which that App is
// served too; an uninstall. The first App is served throughout, its workload's pod template
// never changes, and the uninstall leaves only the CRD (kept on purpose: deleting it would
// delete every App and its workload).
func TestTheHelmChartInstallsUpgradesRollsBackAndUninstalls(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	rel, err := localcluster.BuildReleases(ctx, root)
	require.NoError(t, err)
	version := rel.Head().Version
	published, err := chart.Pull(c.Registry+"/mycompany/charts/app-operator", version)
	require.NoError(t, err)
	h, err := chart.ForCluster(c.Kubeconfig, helmNamespace, published)
	require.NoError(t, err)
	manager := client.ObjectKey{Namespace: helmNamespace, Name: "app-operator-controller-manager"}

	start := time.Now()
	installed, err := h.Install(ctx, helmRelease, nil, 5*time.Minute)
	require.NoError(t, err)
	t.Logf("helm install: ready in %.1fs", time.Since(start).Seconds())
	require.Equal(t, version, installed.Chart.Metadata.Version)
	app := runSample(t, c, "web")
	template := podTemplate(t, c, app)
	first := servingSecret(t, c)

	// Upgrade: a flag of the manager's, a new certificate, and the sample's namespace only.
	start = time.Now()
	_, err = h.Upgrade(ctx, helmRelease, map[string]any{
		"manager":         map[string]any{"extraArgs": []any{"--sync-period=1h"}},
		"certificates":    map[string]any{"rotate": true},
		"watchNamespaces": []any{app.Namespace},
	}, 5*time.Minute)
	require.NoError(t, err)
	t.Logf("helm upgrade: ready in %.1fs", time.Since(start).Seconds())
	require.Contains(t, managerArgs(t, c, manager), "--sync-period=1h")
	rotated := servingSecret(t, c)
	require.NotEqual(t, first.Data["tls.crt"], rotated.Data["tls.crt"], "the certificate was rotated")
	// Until the next upgrade the API server trusts both CAs, so that no call fails while the
	// kubelet brings the new certificate to the pods.
	require.Equal(t, []string{subject(t, rotated.Data["ca.crt"]), subject(t, first.Data["ca.crt"])}, caBundleSubjects(t, c))
	scale(t, c, app, 3)
	// Narrowed to the sample's namespace, the release leaves an App elsewhere alone, and its
	// manager may not read Apps or their workloads there.
	require.NoError(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: elsewhere}}))
	alone, err := c.CheckLeftAlone(ctx, elsewhere, 15*time.Second)
	require.NoError(t, err)
	requireAccess(t, c, helmNamespace, map[string]bool{app.Namespace: true, elsewhere: false})

	// Rollback to the first revision: its flags, its certificate, and every namespace: the App
	// left alone is served now, as it was written.
	start = time.Now()
	require.NoError(t, h.Rollback(helmRelease, 1, 5*time.Minute))
	t.Logf("helm rollback: ready in %.1fs", time.Since(start).Seconds())
	require.NotContains(t, managerArgs(t, c, manager), "--sync-period=1h")
	require.Equal(t, first.Data, servingSecret(t, c).Data)
	scale(t, c, app, 2)
	require.NoError(t, c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(alone), 2*time.Minute))
	assert.Equal(t, template, podTemplate(t, c, app), "App Operator's upgrade and rollback left the workload's pods alone")

	// Uninstall: nothing of the release is left but the CRD, and with it the App and its
	// workload.
	require.NoError(t, h.Uninstall(helmRelease, 3*time.Minute))
	objs, err := bundle.Decode(bytes.NewBufferString(installed.Manifest))
	require.NoError(t, err)
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(o), got)
		if o.GetKind() == "CustomResourceDefinition" {
			assert.NoError(t, err, "helm uninstall keeps the CRD")
			continue
		}
		assert.True(t, apierrors.IsNotFound(err), "%s %s left behind: %v", o.GetKind(), client.ObjectKeyFromObject(o), err)
	}
	secrets := &corev1.SecretList{}
	require.NoError(t, c.Client.List(ctx, secrets, client.InNamespace(helmNamespace), client.MatchingLabels{"owner": "helm"}))
	assert.Empty(t, secrets.Items, "helm's release history is gone")
	assert.Equal(t, template, podTemplate(t, c, app), "the App's workload runs on")
}

func servingSecret(t *testing.T, c *localcluster.Cluster) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, c.Client.Get(context.Background(), client.ObjectKey{Namespace: helmNamespace, Name: "app-operator-serving-cert"}, s))
	return s
}

// caBundleSubjects are the subjects of the CAs the validating webhook's caBundle holds.
func caBundleSubjects(t *testing.T, c *localcluster.Cluster) []string {
	t.Helper()
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	require.NoError(t, c.Client.Get(context.Background(), client.ObjectKey{Name: "app-operator-validating-webhook-configuration"}, v))
	var out []string
	for rest := v.Webhooks[0].ClientConfig.CABundle; len(rest) > 0; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		out = append(out, subject(t, pem.EncodeToMemory(block)))
	}
	return out
}

// subject is a PEM certificate's subject and serial number: two CAs of the same name differ.
func subject(t *testing.T, certPEM []byte) string {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert.Subject.String() + " #" + cert.SerialNumber.String()
}
