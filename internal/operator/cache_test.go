package operator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/operator"
)

func TestTheCacheKeepsOfAnAppWhatTheOperatorReads(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations, want map[string]string
	}{
		"kubectl apply's copy is dropped": {
			annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`, "team": "shop"},
			want:        map[string]string{"team": "shop"},
		},
		"other annotations stay":  {annotations: map[string]string{"team": "shop"}, want: map[string]string{"team": "shop"}},
		"no annotations, no harm": {},
	} {
		t.Run(name, func(t *testing.T) {
			app := &appv1.App{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: tc.annotations, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
				Spec:       appv1.AppSpec{Image: "registry.example.com/web:1.0"},
				Status:     appv1.AppStatus{ObservedGeneration: 3},
			}
			out, err := operator.TrimApp(app)
			require.NoError(t, err)
			got := out.(*appv1.App)
			assert.Equal(t, tc.want, got.Annotations)
			assert.Nil(t, got.ManagedFields)
			assert.Equal(t, "registry.example.com/web:1.0", got.Spec.Image, "the spec stays")
			assert.Equal(t, int64(3), got.Status.ObservedGeneration, "the status stays")
		})
	}
}

func TestTheCacheHoldsTheWatchedNamespacesOnly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		namespaces []string
		want       []string
	}{
		{"every namespace", nil, nil},
		{"one", []string{"team-a"}, []string{"team-a"}},
		{"several", []string{"team-a", "team-b"}, []string{"team-a", "team-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := operator.CacheOptions(time.Hour, tc.namespaces)
			var got []string
			for ns := range o.DefaultNamespaces {
				got = append(got, ns)
			}
			require.ElementsMatch(t, tc.want, got)
			require.Equal(t, tc.want == nil, o.DefaultNamespaces == nil, "no namespaces: the cache is cluster-wide")
		})
	}
}
