package operator_test

import (
	"fmt"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/desired"
	"github.com/mycompany/app-operator/controllers/status"
	"github.com/mycompany/app-operator/internal/operator"
)

// convergedApp is App i as the cache receives it once it converged: defaulted, with its status.
func convergedApp(i int) *appv1.App {
	app := &appv1.App{
		TypeMeta: metav1.TypeMeta{APIVersion: appv1.GroupVersion.String(), Kind: "App"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%05d", i), UID: "0b6f1d9e-2c4a-4e8b-9f3d-7a5c1e2b3d4f",
			ResourceVersion: fmt.Sprint(1000 + i), Generation: 1, CreationTimestamp: metav1.Now(),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}},
		Spec: appv1.AppSpec{Image: "registry.example.com/shop/web:1.27", Replicas: ptr.To(int32(2)),
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "shop", Effect: corev1.TaintEffectNoSchedule}}},
	}
	appv1.SetDefaults(app)
	d := desired.Deployment(app, desired.Options{})
	d.Generation, d.Status = 1, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2}
	app.Status = status.Compute(app, status.Observed{Deployment: d, ServiceName: app.Name}, metav1.Now())
	return app
}

// convergedDeployment is the Deployment of App i as the cache receives it once it converged.
func convergedDeployment(i int) *appsv1.Deployment {
	app := convergedApp(i)
	d := desired.Deployment(app, desired.Options{})
	d.UID, d.ResourceVersion, d.Generation, d.CreationTimestamp = "5e2a8c1f-9b3d-4f6a-8e7c-1d2b3a4c5e6f", fmt.Sprint(2000+i), 1, metav1.Now()
	d.OwnerReferences = []metav1.OwnerReference{{APIVersion: appv1.GroupVersion.String(), Kind: "App", Name: app.Name, UID: app.UID, Controller: ptr.To(true)}}
	d.Annotations = map[string]string{apply.HashAnnotation: "7f3a9c", "deployment.kubernetes.io/revision": "1"}
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: apply.FieldOwner, Operation: metav1.ManagedFieldsOperationApply}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", app.Name+"-5d8f7c9b6")},
		}}
	return d
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(appv1.AddToScheme(s))
	return s
}()

// The serializers the API server sends objects to the cache with, made once: a benchmark's
// loop decodes with them.
var (
	jsonSerializer     = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{})
	protobufSerializer = protobuf.NewSerializer(scheme, scheme)
)

// serializer is how the API server sends obj to the cache: JSON for Apps, protobuf for
// Kubernetes' own kinds.
func serializer(obj runtime.Object) runtime.Serializer {
	if _, ok := obj.(*appv1.App); ok {
		return jsonSerializer
	}
	return protobufSerializer
}

func encoded(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	raw, err := runtime.Encode(serializer(obj), obj)
	require.NoError(t, err)
	return raw
}

// decoded is raw as the cache's informers decode it, into a new object of into's kind.
func decoded[T runtime.Object](t testing.TB, raw []byte, into T) T {
	t.Helper()
	obj, _, err := serializer(into).Decode(raw, nil, into.DeepCopyObject())
	require.NoError(t, err)
	return obj.(T)
}

// shared says whether two strings' bytes are the same memory.
func shared(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestTheCachedAppsShareTheStringsTheyRepeat(t *testing.T) {
	// No garbage collection between the two Apps, which could drop a shared copy in between.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	raw := encoded(t, convergedApp(1))
	one, err := operator.TrimApp(decoded(t, raw, &appv1.App{}))
	require.NoError(t, err)
	other, err := operator.TrimApp(decoded(t, raw, &appv1.App{}))
	require.NoError(t, err)
	a, b := one.(*appv1.App), other.(*appv1.App)

	want := decoded(t, raw, &appv1.App{})
	want.ManagedFields = nil
	require.Equal(t, want, a, "only managedFields are dropped; every value stays")
	for name, pair := range map[string][2]string{
		"namespace":           {a.Namespace, b.Namespace},
		"image":               {a.Spec.Image, b.Spec.Image},
		"port name":           {a.Spec.Ports[0].Name, b.Spec.Ports[0].Name},
		"service type":        {string(a.Spec.Service.Type), string(b.Spec.Service.Type)},
		"toleration key":      {a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key},
		"seccomp profile":     {string(a.Spec.SecurityContext.Pod.SeccompProfile.Type), string(b.Spec.SecurityContext.Pod.SeccompProfile.Type)},
		"dropped capability":  {string(a.Spec.SecurityContext.Container.Capabilities.Drop[0]), string(b.Spec.SecurityContext.Container.Capabilities.Drop[0])},
		"status image":        {a.Status.Image, b.Status.Image},
		"condition type":      {a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		"condition reason":    {a.Status.Conditions[4].Reason, b.Status.Conditions[4].Reason},
		"condition message":   {a.Status.Conditions[4].Message, b.Status.Conditions[4].Message},
		"image, spec, status": {a.Spec.Image, b.Status.Image},
	} {
		assert.True(t, shared(pair[0], pair[1]), "%s: %q is not shared", name, pair[0])
	}
	assert.False(t, shared(a.Name, b.Name), "a name is an App's own")
	assert.Equal(t, len(a.Status.Conditions), cap(a.Status.Conditions), "the conditions' slice holds no spare room")
}

func TestTheCachedChildrenAreSlimmedWhereTheyWereDecoded(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	raw := encoded(t, convergedDeployment(1))
	in, other := decoded(t, raw, &appsv1.Deployment{}), decoded(t, raw, &appsv1.Deployment{})
	one, err := operator.SlimChild(in)
	require.NoError(t, err)
	require.Same(t, in, one, "the decoder's object is kept, not a copy")
	two, err := operator.SlimChild(other)
	require.NoError(t, err)
	a, b := one.(*appsv1.Deployment), two.(*appsv1.Deployment)

	full := decoded(t, raw, &appsv1.Deployment{})
	assert.Equal(t, full.Status, a.Status, "the status stays")
	for name, pair := range map[string][2]string{
		"namespace":         {a.Namespace, b.Namespace},
		"owner's kind":      {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"owner's version":   {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"container name":    {a.Spec.Template.Spec.Containers[0].Name, b.Spec.Template.Spec.Containers[0].Name},
		"image":             {a.Spec.Template.Spec.Containers[0].Image, b.Spec.Template.Spec.Containers[0].Image},
		"condition reason":  {a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		"condition message": {a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
	} {
		assert.True(t, shared(pair[0], pair[1]), "%s: %q is not shared", name, pair[0])
	}
}
