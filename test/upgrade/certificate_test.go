package upgrade

import (
	"context"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appwebhook "github.com/mycompany/app-operator/internal/webhook"
	"github.com/mycompany/app-operator/test/localcluster"
)

// certificateSecret is where OLM keeps the webhooks' serving certificate and its CA.
var certificateSecret = client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: appwebhook.CertificateSecret}

// certificate returns OLM's Secret of the webhooks' certificate. A new Secret holds a new CA,
// which OLM gives the API server while older pods still serve the older one.
func (e *env) certificate(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, e.Client.Get(context.Background(), certificateSecret, s))
	return s
}

// assertCertificateKept checks that an upgrade from one release to another kept the Secret of
// the webhooks' certificate: the manager of the release it went to added its
// ClusterServiceVersion to the Secret's owners (internal/webhook: CertificateKeeper), so the
// garbage collector did not delete it with the ClusterServiceVersion replaced, and OLM issued
// no new CA. Called once the release has settled, seconds after OLM removed the older one.
func (e *env) assertCertificateKept(t *testing.T, before types.UID, from, to string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, e.WaitForCSVGone(ctx, csvName(from), time.Minute))
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, e.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: csvName(to)}, csv))
	s := e.certificate(t)
	require.Equal(t, before, s.UID, "the upgrade from %s to %s kept the webhooks' certificate", from, to)
	var owners []types.UID
	for _, o := range s.OwnerReferences {
		owners = append(owners, o.UID)
	}
	require.Contains(t, owners, csv.UID, "%s owns the webhooks' certificate", csv.Name)
}
