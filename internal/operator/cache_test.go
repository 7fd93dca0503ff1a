package operator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/apply"
	"github.com/mycompany/app-operator/controllers/desired"
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

func TestTheCacheKeepsOfAChildWhatTheReconcilerReads(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "child-uid", ResourceVersion: "42", Generation: 3,
			Labels:          map[string]string{appv1.LabelManagedBy: appv1.ManagedByValue},
			Annotations:     map[string]string{apply.HashAnnotation: "abc", "deployment.kubernetes.io/revision": "2"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "App", Name: "web", UID: "app-uid", Controller: ptr.To(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: apply.FieldOwner, Operation: metav1.ManagedFieldsOperationApply}},
		}
	}
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.example.com/web:1.0", Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
	}}}}
	deployment := &appsv1.Deployment{ObjectMeta: meta(),
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Template: template},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, AvailableReplicas: 2}}
	for _, tc := range []struct {
		name string
		full client.Object
		want client.Object
	}{
		{"a Deployment: replicas, images, the template's hash and status", deployment, &appsv1.Deployment{
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/web:1.0"}}}}},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 3, AvailableReplicas: 2}}},
		{"a Service: nothing of its spec", &corev1.Service{ObjectMeta: meta(),
			Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7", Ports: []corev1.ServicePort{{Port: 80}}}}, &corev1.Service{}},
		{"an autoscaler", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta(),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3}}, &autoscalingv2.HorizontalPodAutoscaler{}},
		{"a disruption budget", &policyv1.PodDisruptionBudget{ObjectMeta: meta(),
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}, &policyv1.PodDisruptionBudget{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := operator.SlimChild(tc.full.DeepCopyObject())
			require.NoError(t, err)
			got := out.(client.Object)

			want := meta()
			want.Labels, want.ManagedFields = nil, nil
			want.Annotations = map[string]string{apply.HashAnnotation: "abc", apply.OwnedHashAnnotation: apply.OwnedHash(tc.full)}
			if _, ok := tc.full.(*appsv1.Deployment); ok {
				want.Annotations[desired.TemplateHashAnnotation] = desired.TemplateHash(&template)
			}
			want.DeepCopyInto(tc.want.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta))
			require.Equal(t, tc.want, got)

			again, err := operator.SlimChild(got.DeepCopyObject())
			require.NoError(t, err)
			require.Equal(t, got, again, "a child slimmed already is left as it is: informers may transform an object twice")
		})
	}
	out, err := operator.SlimChild(deployment.DeepCopy())
	require.NoError(t, err)
	require.Equal(t, desired.TemplateHash(&template), desired.DeploymentTemplateHash(out.(*appsv1.Deployment)),
		"the template's hash is read as if the template were there")
}
