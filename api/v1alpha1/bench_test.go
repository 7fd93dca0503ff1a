package v1alpha1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/api/v1alpha1"
)

func hubWithV1OnlyFields() *v1.App {
	a := &v1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       v1.AppSpec{Image: "nginx:1.27", Replicas: ptr.To(int32(3)), Args: []string{"--port=8080"}},
	}
	v1.SetDefaults(a)
	return a
}

// BenchmarkConvertHubToSpokeAndBack is what the conversion webhook does for a v1 App read as
// v1alpha1 and written back. BenchmarkConvertPlainSpokeAndBack, an App with nothing v1alpha1
// cannot hold, is the baseline: the difference is the annotation's cost.
func BenchmarkConvertHubToSpokeAndBack(b *testing.B) {
	hub := hubWithV1OnlyFields()
	b.ReportAllocs()
	for b.Loop() {
		spoke := &v1alpha1.App{}
		if err := spoke.ConvertFrom(hub); err != nil {
			b.Fatal(err)
		}
		if err := spoke.ConvertTo(&v1.App{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertPlainSpokeAndBack(b *testing.B) {
	hub := &v1.App{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: v1.AppSpec{Image: "nginx:1.27", Replicas: ptr.To(int32(3))}}
	b.ReportAllocs()
	for b.Loop() {
		spoke := &v1alpha1.App{}
		if err := spoke.ConvertFrom(hub); err != nil {
			b.Fatal(err)
		}
		if err := spoke.ConvertTo(&v1.App{}); err != nil {
			b.Fatal(err)
		}
	}
}
