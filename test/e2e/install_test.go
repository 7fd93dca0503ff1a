package e2e

import (
	"context"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

func TestOLMInstallsTheOperatorFromTheCatalog(t *testing.T) {
	ctx := context.Background()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: headCSV()}, csv))
	require.Equal(t, operatorsv1alpha1.CSVPhaseSucceeded, csv.Status.Phase)

	// OLM made the conversion webhook's certificate and injected its CA into the CRD.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd))
	conv := crd.Spec.Conversion
	require.Equal(t, apiextensionsv1.WebhookConverter, conv.Strategy)
	require.NotEmpty(t, conv.Webhook.ClientConfig.CABundle, "OLM injects the caBundle")
	require.Equal(t, localcluster.DeploymentName+"-service", conv.Webhook.ClientConfig.Service.Name)
	require.Equal(t, localcluster.OperatorsNamespace, conv.Webhook.ClientConfig.Service.Namespace)

	// Nothing is stored in an older version, so the operator tells OLM it may be replaced.
	eventually(t, time.Minute, func(c *assert.CollectT) {
		oc := &operatorsv2.OperatorCondition{}
		require.NoError(c, cluster.Client.Get(ctx, client.ObjectKey{Namespace: localcluster.OperatorsNamespace, Name: headCSV()}, oc))
		up := meta.FindStatusCondition(oc.Spec.Conditions, operatorsv2.Upgradeable)
		require.NotNil(c, up, "the operator sets Upgradeable")
		require.Equal(c, metav1.ConditionTrue, up.Status)
		require.Equal(c, "StorageMigrated", up.Reason)
	}, "the operator to report Upgradeable")
	require.Equal(t, []string{"v1"}, crd.Status.StoredVersions)
}
