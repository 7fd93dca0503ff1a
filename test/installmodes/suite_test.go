// Package installmodes installs App Operator from its catalog for some namespaces only, the
// way tenants' admins do, through real OperatorGroups: OwnNamespace, SingleNamespace and
// MultiNamespace, side by side on one cluster. (test/e2e runs the AllNamespaces install.)
// Each install reconciles and admits the Apps of its target namespaces, leaves every other
// namespace alone, and holds no right there.
package installmodes

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

func TestMain(m *testing.M) { os.Exit(localcluster.Main(m, "installmodes", nil)) }

// install is one install of the operator: its own namespace, where OLM runs it, and the
// namespaces its OperatorGroup targets.
type install struct {
	mode      operatorsv1alpha1.InstallModeType
	namespace string
	targets   []string
}

// subscribe creates the install's namespaces, its OperatorGroup and its Subscription to the
// stable channel, and waits until OLM has installed the channel's head there and its webhooks
// answer in every target namespace.
func subscribe(t *testing.T, c *localcluster.Cluster, in install, csv string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range append([]string{in.namespace}, in.targets...) {
		createNamespace(t, c, ns)
	}
	group := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: in.namespace, Name: "app-operator"},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: in.targets}}
	require.NoError(t, c.Client.Create(ctx, group))
	require.NoError(t, c.Client.Create(ctx, localcluster.NewSubscription(in.namespace, localcluster.PackageName, localcluster.Subscription{})))

	got, err := c.WaitForCSVIn(ctx, in.namespace, csv, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)
	require.NoError(t, err)
	require.Equal(t, strings.Join(in.targets, ","), got.Annotations["olm.targetNamespaces"])
	require.NoError(t, c.WaitForDeployment(ctx, client.ObjectKey{Namespace: in.namespace, Name: localcluster.DeploymentName}, 3*time.Minute))
	for _, ns := range in.targets {
		require.NoError(t, c.WaitForWebhooksIn(ctx, ns))
	}
}

func createNamespace(t *testing.T, c *localcluster.Cluster, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	require.NoError(t, client.IgnoreAlreadyExists(c.Client.Create(context.Background(), ns)))
}
