package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func TestDefaultsAreApplied(t *testing.T) {
	ctx := context.Background()
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "web"},
		Spec:       appv1.AppSpec{Image: "nginx:1.27"},
	}
	require.NoError(t, env.Client.Create(ctx, app))

	require.Equal(t, int32(1), *app.Spec.Replicas)
	require.Equal(t, []appv1.AppPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, app.Spec.Ports)
	require.Equal(t, &appv1.ServiceSpec{Enabled: ptr.To(true), Type: corev1.ServiceTypeClusterIP, Port: 80, TargetPort: "http"}, app.Spec.Service)
	require.True(t, *app.Spec.SecurityContext.Pod.RunAsNonRoot)
	require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, app.Spec.SecurityContext.Pod.SeccompProfile.Type)
	require.False(t, *app.Spec.SecurityContext.Container.AllowPrivilegeEscalation)
	require.Equal(t, []corev1.Capability{"ALL"}, app.Spec.SecurityContext.Container.Capabilities.Drop)
}

// v1alpha1 is gone from the CRD: a client that still writes it is told so, naming the
// version, and nothing is created.
func TestV1alpha1IsGone(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("mycompany.com/v1alpha1")
	old.SetKind("App")
	old.SetNamespace(ns)
	old.SetName("legacy")
	require.NoError(t, unstructured.SetNestedField(old.Object, "nginx:1.27", "spec", "image"))
	err := env.Client.Create(ctx, old)
	require.True(t, meta.IsNoMatchError(err), "want no match for the version, got %v", err)
	require.Contains(t, err.Error(), `no matches for kind "App" in version "mycompany.com/v1alpha1"`)

	// A client that skips discovery, as a raw request does, gets 404 from the API server.
	body := `{"apiVersion":"mycompany.com/v1alpha1","kind":"App","metadata":{"name":"legacy"},"spec":{"image":"nginx:1.27"}}`
	res := rawClient(t).Post().AbsPath("/apis/mycompany.com/v1alpha1/namespaces", ns, "apps").Body([]byte(body)).Do(ctx)
	require.True(t, apierrors.IsNotFound(res.Error()), "want 404, got %v", res.Error())

	err = env.Client.Get(ctx, client.ObjectKeyFromObject(old), &appv1.App{})
	require.True(t, apierrors.IsNotFound(err), "nothing was created: %v", err)

	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, &crd))
	require.Len(t, crd.Spec.Versions, 1)
	require.Equal(t, "v1", crd.Spec.Versions[0].Name)
	require.Nil(t, crd.Spec.Conversion.Webhook, "no conversion webhook: %+v", crd.Spec.Conversion)
	require.Equal(t, []string{"v1"}, crd.Status.StoredVersions)
}

// rawClient is a REST client of the test's API server that needs no scheme or discovery.
func rawClient(t *testing.T) *rest.RESTClient {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.UnversionedRESTClientFor(cfg)
	require.NoError(t, err)
	return c
}

func TestInvalidAppsAreRefusedNamingEachField(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name   string
		app    func(*appv1.App)
		fields []string
	}{
		{"image missing", func(a *appv1.App) { a.Spec.Image = "" }, []string{"spec.image"}},
		{"image malformed", func(a *appv1.App) { a.Spec.Image = "nginx:::1" }, []string{"spec.image"}},
		{"image uppercase", func(a *appv1.App) { a.Spec.Image = "Registry/NGINX" }, []string{"spec.image"}},
		{"name starts with a digit", func(a *appv1.App) { a.Name = "1web" }, []string{"metadata.name"}},
		{"name with a dot", func(a *appv1.App) { a.Name = "web.v2" }, []string{"metadata.name"}},
		{"name too long for a label", func(a *appv1.App) { a.Name = strings.Repeat("a", 64) }, []string{"metadata.name"}},
		{"port name invalid", func(a *appv1.App) { a.Spec.Ports = []appv1.AppPort{{Name: "HTTP_1", ContainerPort: 80}} }, []string{"spec.ports[0].name"}},
		{"port number reused", func(a *appv1.App) {
			a.Spec.Ports = []appv1.AppPort{{Name: "a", ContainerPort: 80}, {Name: "b", ContainerPort: 80}}
		}, []string{"spec.ports[1].containerPort"}},
		{"service target port unknown", func(a *appv1.App) {
			a.Spec.Ports = []appv1.AppPort{{Name: "http", ContainerPort: 80}}
			a.Spec.Service = &appv1.ServiceSpec{TargetPort: "grpc"}
		}, []string{"spec.service.targetPort"}},
		{"probe port unknown", func(a *appv1.App) {
			a.Spec.Probes = &appv1.Probes{Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("metrics")}}}}
		}, []string{"spec.probes.readiness.port"}},
		{"requests above limits", func(a *appv1.App) {
			a.Spec.Resources = &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}, []string{"spec.resources.requests[cpu]"}},
		{"disruption budget with both fields", func(a *appv1.App) {
			a.Spec.DisruptionBudget = &appv1.DisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
		}, []string{"spec.disruptionBudget"}},
		{"rollout percentage out of range", func(a *appv1.App) {
			a.Spec.Rollout = &appv1.RolloutSpec{MaxSurge: ptr.To(intstr.FromString("150%"))}
		}, []string{"spec.rollout.maxSurge"}},
		{"reserved pod label", func(a *appv1.App) { a.Spec.PodLabels = map[string]string{appv1.LabelInstance: "other"} }, []string{"spec.podLabels[app.kubernetes.io/instance]"}},
		{"every problem at once", func(a *appv1.App) {
			a.Name = "9lives"
			a.Spec.Image = "nginx::"
			a.Spec.ServiceAccountName = "Not_Valid"
		}, []string{"metadata.name", "spec.image", "spec.serviceAccountName"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := &appv1.App{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec:       appv1.AppSpec{Image: "nginx:1.27"},
			}
			tc.app(app)
			err := env.Client.Create(context.Background(), app)
			require.Error(t, err)
			require.Truef(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
			for _, f := range tc.fields {
				require.Contains(t, err.Error(), f)
			}
			absent := env.Client.Get(context.Background(), client.ObjectKeyFromObject(app), &appv1.App{})
			require.True(t, apierrors.IsNotFound(absent), "a refused App is not stored")
		})
	}
}

func TestCELRulesRefuseInconsistentAutoscaling(t *testing.T) {
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "web"},
		Spec: appv1.AppSpec{Image: "nginx:1.27",
			Autoscaling: &appv1.AutoscalingSpec{MinReplicas: ptr.To(int32(5)), MaxReplicas: 2}},
	}
	err := env.Client.Create(context.Background(), app)
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), "spec.autoscaling.minReplicas")
	require.Contains(t, err.Error(), "minReplicas must not exceed maxReplicas")
}

func TestAnUpdateThatBreaksAnAppIsRefused(t *testing.T) {
	ctx := context.Background()
	app := &appv1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "web"},
		Spec:       appv1.AppSpec{Image: "nginx:1.27"},
	}
	require.NoError(t, env.Client.Create(ctx, app))
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Image = "not a reference"
	err := env.Client.Patch(ctx, app, patch)
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), "spec.image")

	var stored appv1.App
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(app), &stored))
	require.Equal(t, "nginx:1.27", stored.Spec.Image)
}

func TestAMalformedQuantityIsRefusedNamingTheField(t *testing.T) {
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mycompany.com/v1", "kind": "App",
		"metadata": map[string]any{"namespace": env.Namespace(t), "name": "web"},
		"spec": map[string]any{"image": "nginx:1.27", "resources": map[string]any{
			"requests": map[string]any{"cpu": "lots", "memory": "64Mi"}, "limits": map[string]any{"memory": "1Gb"}},
			"env": []any{map[string]any{"name": "CPU", "valueFrom": map[string]any{
				"resourceFieldRef": map[string]any{"resource": "limits.cpu", "divisor": "a core"}}}}},
	}}
	err := env.Client.Create(context.Background(), app)
	require.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), "spec.resources.requests[cpu]")
	require.Contains(t, err.Error(), "spec.resources.limits[memory]")
	require.Contains(t, err.Error(), "spec.env[0].valueFrom.resourceFieldRef.divisor")
	require.NotContains(t, err.Error(), "spec.resources.requests[memory]")
}

// A value of the wrong type, or too large for its field, reaches the defaulting webhook before
// the API server's schema validation; it is refused as the schema would refuse it: a 422
// naming the field, never a decoder's message.
func TestValuesOfTheWrongTypeAreRefusedNamingTheField(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name        string
		spec        map[string]any
		field, rule string
	}{
		{"replicas a string", map[string]any{"replicas": "three"}, "spec.replicas", "must be of type integer"},
		{"replicas beyond 32 bits", map[string]any{"replicas": int64(99999999999)}, "spec.replicas", "must be of type integer with format int32"},
		{"image a number", map[string]any{"image": int64(5)}, "spec.image", "must be of type string"},
		{"args not a list", map[string]any{"args": "--verbose"}, "spec.args", "must be of type array"},
		{"service not an object", map[string]any{"service": "yes"}, "spec.service", "must be of type object"},
		{"port a string", map[string]any{"ports": []any{map[string]any{"name": "http", "containerPort": "eighty"}}}, "spec.ports[0].containerPort", "must be of type integer"},
		{"autoscaling max a fraction", map[string]any{"autoscaling": map[string]any{"maxReplicas": 2.5}}, "spec.autoscaling.maxReplicas", "must be of type int32"},
		{"autoRollback a string", map[string]any{"rollout": map[string]any{"autoRollback": "no"}}, "spec.rollout.autoRollback", "must be of type boolean"},
		{"pod label value a number", map[string]any{"podLabels": map[string]any{"tier": int64(1)}}, "spec.podLabels.tier", "must be of type string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{"image": "nginx:1.27"}
			for k, v := range tc.spec {
				spec[k] = v
			}
			app := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "mycompany.com/v1", "kind": "App",
				"metadata": map[string]any{"namespace": ns, "name": "web"},
				"spec":     spec,
			}}
			err := env.Client.Create(context.Background(), app)
			require.Truef(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
			require.Contains(t, err.Error(), tc.field+": Invalid value")
			require.Contains(t, err.Error(), tc.rule)
			require.NotContains(t, err.Error(), "unmarshal")
		})
	}
}
