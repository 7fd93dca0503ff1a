package v1alpha1_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/randfill"

	v1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/api/v1alpha1"
)

// roundTrips is the number of random objects each direction converts.
const roundTrips = 10000

func newFiller(seed int64) *randfill.Filler {
	scheme := runtime.NewScheme()
	codecs := serializer.NewCodecFactory(scheme)
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(serializer.CodecFactory) []interface{} {
		return []interface{}{
			// Quantities have many spellings of one value; keep to canonical ones.
			func(q *resource.Quantity, c randfill.Continue) {
				*q = *resource.NewMilliQuantity(c.Int63n(1_000_000), resource.DecimalSI)
			},
			// The annotation that carries v1-only fields belongs to conversion, not to users.
			func(m *metav1.ObjectMeta, c randfill.Continue) {
				c.FillNoCustom(m)
				delete(m.Annotations, v1alpha1.ConversionDataAnnotation)
			},
		}
	})
	return fuzzer.FuzzerFor(funcs, rand.NewSource(seed), codecs).NilChance(0.3)
}

func TestHubSpokeHubIsLossless(t *testing.T) {
	f := newFiller(1)
	for i := range roundTrips {
		hub := &v1.App{}
		f.Fill(hub)
		hub.TypeMeta = metav1.TypeMeta{}

		spoke := &v1alpha1.App{}
		require.NoError(t, spoke.ConvertFrom(hub.DeepCopy()))
		back := &v1.App{}
		require.NoError(t, spoke.ConvertTo(back))

		if !equality.Semantic.DeepEqual(hub, back) {
			t.Fatalf("round trip %d lost data (-want +got):\n%s", i, diff.Diff(hub, back))
		}
	}
}

func TestSpokeHubSpokeIsLossless(t *testing.T) {
	f := newFiller(2)
	for i := range roundTrips {
		spoke := &v1alpha1.App{}
		f.Fill(spoke)
		spoke.TypeMeta = metav1.TypeMeta{}

		hub := &v1.App{}
		require.NoError(t, spoke.DeepCopy().ConvertTo(hub))
		back := &v1alpha1.App{}
		require.NoError(t, back.ConvertFrom(hub))

		if !equality.Semantic.DeepEqual(spoke, back) {
			t.Fatalf("round trip %d lost data (-want +got):\n%s", i, diff.Diff(spoke, back))
		}
	}
}

func TestConversionKeepsV1OnlyFieldsInAnnotation(t *testing.T) {
	hub := &v1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"team": "a"}},
		Spec: v1.AppSpec{
			Image:    "nginx:1.27",
			Replicas: ptrTo(int32(3)),
			Args:     []string{"--port=8080"},
			Ports:    []v1.AppPort{{Name: "http", ContainerPort: 8080}},
		},
		Status: v1.AppStatus{AvailableReplicas: 3, ServiceName: "web"},
	}

	spoke := &v1alpha1.App{}
	require.NoError(t, spoke.ConvertFrom(hub))
	require.Equal(t, "nginx:1.27", spoke.Spec.Image)
	require.Equal(t, int32(3), *spoke.Spec.Replicas)
	require.Equal(t, int32(3), spoke.Status.AvailableReplicas)
	require.Equal(t, "a", spoke.Annotations["team"])
	require.JSONEq(t,
		`{"spec":{"image":"","args":["--port=8080"],"ports":[{"name":"http","containerPort":8080}]},"status":{"serviceName":"web"}}`,
		spoke.Annotations[v1alpha1.ConversionDataAnnotation])

	// A v1alpha1 client edits the fields it knows; they win over the annotation.
	spoke.Spec.Image = "nginx:1.28"
	spoke.Spec.Replicas = ptrTo(int32(5))
	back := &v1.App{}
	require.NoError(t, spoke.ConvertTo(back))
	require.Equal(t, "nginx:1.28", back.Spec.Image)
	require.Equal(t, int32(5), *back.Spec.Replicas)
	require.Equal(t, []string{"--port=8080"}, back.Spec.Args)
	require.Equal(t, "web", back.Status.ServiceName)
	require.Equal(t, map[string]string{"team": "a"}, back.Annotations)
}

func TestConversionWithoutV1OnlyFieldsAddsNoAnnotation(t *testing.T) {
	hub := &v1.App{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       v1.AppSpec{Image: "nginx", Replicas: ptrTo(int32(1))},
	}
	spoke := &v1alpha1.App{}
	require.NoError(t, spoke.ConvertFrom(hub))
	require.Nil(t, spoke.Annotations)
}

func TestConversionRejectsCorruptAnnotation(t *testing.T) {
	spoke := &v1alpha1.App{ObjectMeta: metav1.ObjectMeta{
		Annotations: map[string]string{v1alpha1.ConversionDataAnnotation: "{not json"},
	}}
	err := spoke.ConvertTo(&v1.App{})
	require.ErrorContains(t, err, "metadata.annotations["+v1alpha1.ConversionDataAnnotation+"]")
}

func ptrTo[T any](v T) *T { return &v }
