// Package installmodes installs App Operator from its catalog for some namespaces only, the
// way tenants' admins do, through real OperatorGroups: OwnNamespace, SingleNamespace and
// MultiNamespace, side by side on one cluster. (test/e2e runs the AllNamespaces install.)
// Each install reconciles and admits the Apps of its target namespaces, leaves every other
// namespace alone, and holds no right there.
package installmodes

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	createSubscription(t, c, in.namespace, localcluster.PackageName, "")

	got := waitForCSV(t, c, in.namespace, csv, operatorsv1alpha1.CSVPhaseSucceeded)
	require.Equal(t, strings.Join(in.targets, ","), got.Annotations["olm.targetNamespaces"])
	require.NoError(t, c.WaitForDeployment(ctx, client.ObjectKey{Namespace: in.namespace, Name: localcluster.DeploymentName}, 3*time.Minute))
	for _, ns := range in.targets {
		require.NoError(t, c.WaitForWebhooksIn(ctx, ns))
	}
}

// createSubscription subscribes to the stable channel in namespace: from its head, with
// automatic approval, or from startingCSV, with manual approval.
func createSubscription(t *testing.T, c *localcluster.Cluster, namespace, name, startingCSV string) *operatorsv1alpha1.Subscription {
	t.Helper()
	approval := operatorsv1alpha1.ApprovalAutomatic
	if startingCSV != "" {
		approval = operatorsv1alpha1.ApprovalManual
	}
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: localcluster.CatalogSourceName, CatalogSourceNamespace: localcluster.OLMNamespace,
			Package: localcluster.PackageName, Channel: localcluster.Channel, StartingCSV: startingCSV, InstallPlanApproval: approval,
		}}
	require.NoError(t, c.Client.Create(context.Background(), sub))
	return sub
}

// waitForCSV waits until a ClusterServiceVersion in namespace reaches phase, and returns it.
func waitForCSV(t *testing.T, c *localcluster.Cluster, namespace, name string, phase operatorsv1alpha1.ClusterServiceVersionPhase) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	got := &operatorsv1alpha1.ClusterServiceVersion{}
	err := c.Poll(context.Background(), 5*time.Minute, fmt.Sprintf("%s in %s to reach %s", name, namespace, phase), func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, got)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return got.Status.Phase == phase, err
	})
	require.NoError(t, err, "phase %q, reason %q: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	return got
}

func createNamespace(t *testing.T, c *localcluster.Cluster, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	require.NoError(t, client.IgnoreAlreadyExists(c.Client.Create(context.Background(), ns)))
}
