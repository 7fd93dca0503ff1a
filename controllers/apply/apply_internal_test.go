package apply

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestContains(t *testing.T) {
	cases := []struct {
		name       string
		have, want string
		contains   bool
	}{
		{"equal", `{"a":1}`, `{"a":1}`, true},
		{"defaults the server added", `{"a":1,"b":{"c":2}}`, `{"a":1}`, true},
		{"changed scalar", `{"a":1}`, `{"a":2}`, false},
		{"missing field", `{"b":1}`, `{"a":1}`, false},
		{"nested change", `{"a":{"b":{"c":1,"d":2}}}`, `{"a":{"b":{"c":3}}}`, false},
		{"named items by name, in any order", `{"l":[{"name":"b","v":2},{"name":"a","v":1,"x":0}]}`, `{"l":[{"name":"a","v":1},{"name":"b","v":2}]}`, true},
		{"named items tolerate items others added", `{"l":[{"name":"a","v":1},{"name":"sidecar"}]}`, `{"l":[{"name":"a","v":1}]}`, true},
		{"named item changed", `{"l":[{"name":"a","v":9}]}`, `{"l":[{"name":"a","v":1}]}`, false},
		{"named item missing", `{"l":[{"name":"b"}]}`, `{"l":[{"name":"a"}]}`, false},
		{"plain list must match item by item", `{"l":["x","y"]}`, `{"l":["x","y"]}`, true},
		{"plain list with an extra item", `{"l":["x","y","z"]}`, `{"l":["x","y"]}`, false},
		{"plain list reordered", `{"l":["y","x"]}`, `{"l":["x","y"]}`, false},
		{"type change", `{"a":"1"}`, `{"a":1}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.contains, contains(parse(t, tc.have), parse(t, tc.want)))
		})
	}
}

func TestPrune(t *testing.T) {
	v := parse(t, `{"a":null,"b":{},"c":{"d":{"e":null}},"f":[{"g":null,"h":1}],"i":0,"j":""}`)
	prune(v)
	require.Equal(t, parse(t, `{"f":[{"h":1}],"i":0,"j":""}`), v)
}

func deployment(image string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
	return d
}

func TestApplyConfiguration(t *testing.T) {
	want, err := applyConfiguration(deployment("web:1"))
	require.NoError(t, err)
	require.NotContains(t, want, "status")
	require.NotContains(t, want, "kind", "the type is set on the request, not compared")
	meta := want["metadata"].(map[string]any)
	require.NotContains(t, meta, "creationTimestamp", "empty values would claim fields")
	hash := meta["annotations"].(map[string]any)[HashAnnotation]
	require.Len(t, hash, 16)

	again, err := applyConfiguration(deployment("web:1"))
	require.NoError(t, err)
	require.Equal(t, want, again, "the same object gives the same configuration")

	other, err := applyConfiguration(deployment("web:2"))
	require.NoError(t, err)
	require.NotEqual(t, hash, other["metadata"].(map[string]any)["annotations"].(map[string]any)[HashAnnotation])
}

func TestAppliedBefore(t *testing.T) {
	want, err := applyConfiguration(deployment("web:1"))
	require.NoError(t, err)
	current := deployment("web:1")
	require.False(t, appliedBefore(current, want))
	current.Annotations = map[string]string{HashAnnotation: want["metadata"].(map[string]any)["annotations"].(map[string]any)[HashAnnotation].(string)}
	require.True(t, appliedBefore(current, want))
}
