package apply

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestOwnedPart(t *testing.T) {
	for _, tc := range []struct {
		name, value, set, want string
	}{
		{"a field", `{"a":1,"b":2}`, `{"f:a":{}}`, `{"a":1}`},
		{"a whole map, by an empty node", `{"m":{"x":1,"y":2}}`, `{"f:m":{}}`, `{"m":{"x":1,"y":2}}`},
		{"fields of a map owned itself", `{"m":{"x":1,"y":2}}`, `{"f:m":{".":{},"f:y":{}}}`, `{"m":{"y":2}}`},
		{"a field the object lacks", `{"a":1}`, `{"f:a":{},"f:gone":{}}`, `{"a":1}`},
		{"list items by key, in the list's order",
			`{"l":[{"name":"b","v":2,"w":0},{"name":"c","v":3},{"name":"a","v":1}]}`,
			`{"f:l":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{},"f:v":{}}}}`,
			`{"l":[{"name":"b","v":2},{"name":"a","v":1}]}`},
		{"items by a key of several fields",
			`{"ports":[{"containerPort":8080,"protocol":"TCP","name":"http"},{"containerPort":8080,"protocol":"UDP","name":"q"}]}`,
			`{"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"UDP\"}":{}}}`,
			`{"ports":[{"containerPort":8080,"protocol":"UDP","name":"q"}]}`},
		{"items by value", `{"s":["x","y","z"]}`, `{"f:s":{"v:\"z\"":{},"v:\"x\"":{}}}`, `{"s":["x","z"]}`},
		{"items by index", `{"s":[{"a":1},{"a":2}]}`, `{"f:s":{"i:1":{}}}`, `{"s":[{"a":2}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, _ := parse(t, tc.set).(map[string]any)
			require.Equal(t, parse(t, tc.want), ownedPart(parse(t, tc.value), set))
		})
	}
}

// appliedService returns svc with the managed fields the API server records after the operator
// applied it.
func appliedService(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	want, err := applyConfiguration(svc)
	require.NoError(t, err)
	svc = svc.DeepCopy()
	svc.Annotations = map[string]string{HashAnnotation: hashOf(want)}
	svc.Spec.ClusterIP = "10.0.0.7" // defaulted by the API server, owned by nobody
	svc.Spec.Ports[0].Protocol = corev1.ProtocolTCP
	svc.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + HashAnnotation + `":{}}},` +
			`"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}}`),
	}}
	return svc
}

func TestOwnedHash(t *testing.T) {
	desired := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	applied := appliedService(t, desired)
	hash := applied.Annotations[HashAnnotation]

	for _, tc := range []struct {
		name   string
		change func(*corev1.Service)
		same   bool
	}{
		{"as applied", func(*corev1.Service) {}, true},
		{"a field nobody owns changed", func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }, true},
		{"a label added by someone else", func(s *corev1.Service) { s.Labels = map[string]string{"team": "shop"} }, true},
		{"an owned field taken by someone else", func(s *corev1.Service) {
			s.ManagedFields[0].FieldsV1.SetRawString(`{"f:metadata":{"f:annotations":{"f:` + HashAnnotation + `":{}}},` +
				`"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}},"f:selector":{}}}`)
			s.Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
		}, false},
		{"an owned field changed with the ownership left as it was", func(s *corev1.Service) { s.Spec.Selector["app"] = "other" }, false},
		{"another manager's entry only", func(s *corev1.Service) { s.ManagedFields[0].Manager = "kubectl" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := applied.DeepCopy()
			tc.change(svc)
			got := OwnedHash(svc)
			if tc.same {
				require.Equal(t, hash, got)
			} else {
				require.NotEqual(t, hash, got)
			}
		})
	}
}
