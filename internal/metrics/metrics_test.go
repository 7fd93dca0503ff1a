package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func app(name string, conds ...metav1.Condition) *appv1.App {
	return &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Status: appv1.AppStatus{Conditions: conds}}
}

func TestAppsCollectorReportsEveryAppsConditions(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, appv1.AddToScheme(scheme))
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		app("web", metav1.Condition{Type: appv1.ConditionAvailable, Status: metav1.ConditionTrue},
			metav1.Condition{Type: appv1.ConditionDegraded, Status: metav1.ConditionFalse}),
		app("api", metav1.Condition{Type: appv1.ConditionAvailable, Status: metav1.ConditionFalse}),
	).Build()
	var _ client.Reader = reader

	want := `
# HELP operator_app_condition The status of each condition of each App: 1 for the status it has.
# TYPE operator_app_condition gauge
operator_app_condition{name="api",namespace="shop",status="False",type="Available"} 1
operator_app_condition{name="api",namespace="shop",status="Unknown",type="Degraded"} 1
operator_app_condition{name="api",namespace="shop",status="Unknown",type="Progressing"} 1
operator_app_condition{name="web",namespace="shop",status="False",type="Degraded"} 1
operator_app_condition{name="web",namespace="shop",status="True",type="Available"} 1
operator_app_condition{name="web",namespace="shop",status="Unknown",type="Progressing"} 1
`
	require.NoError(t, testutil.CollectAndCompare(&appsCollector{reader: reader}, strings.NewReader(want), "operator_app_condition"))
	n, err := testutil.GatherAndCount(registryWith(t, &appsCollector{reader: reader}), "operator_apps")
	require.NoError(t, err)
	require.Equal(t, 9, n, "three condition types by three statuses")
}

func registryWith(t *testing.T, c *appsCollector) *prometheus.Registry {
	t.Helper()
	r := prometheus.NewRegistry()
	require.NoError(t, r.Register(c))
	return r
}
