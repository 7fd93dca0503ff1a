package envtest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// WithoutWebhooks takes namespace ns out of every webhook's reach, as an install of App
// Operator for other namespaces does, and returns once an invalid App is admitted there
// unchecked. The returned func, which the test's end calls too, brings the webhooks back and
// returns once an invalid App is refused there again.
func (e *Environment) WithoutWebhooks(t *testing.T, ns string) (restore func()) {
	t.Helper()
	ctx := context.Background()
	elsewhere := map[string]any{"matchExpressions": []any{map[string]any{
		"key": corev1.LabelMetadataName, "operator": "NotIn", "values": []any{ns},
	}}}
	var originals []*unstructured.Unstructured
	for _, kind := range []string{"MutatingWebhookConfigurationList", "ValidatingWebhookConfigurationList"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind(kind))
		require.NoError(t, e.Client.List(ctx, list))
		for _, cfg := range list.Items {
			original := cfg.DeepCopy()
			hooks, _, err := unstructured.NestedSlice(cfg.Object, "webhooks")
			require.NoError(t, err)
			for _, h := range hooks {
				h.(map[string]any)["namespaceSelector"] = elsewhere
			}
			require.NoError(t, unstructured.SetNestedSlice(cfg.Object, hooks, "webhooks"))
			require.NoError(t, e.Client.Patch(ctx, &cfg, client.MergeFrom(original)))
			originals = append(originals, original)
		}
	}
	e.waitForAdmission(t, ns, false)

	var once sync.Once
	restore = func() {
		once.Do(func() {
			for _, original := range originals {
				current := &unstructured.Unstructured{}
				current.SetGroupVersionKind(original.GroupVersionKind())
				require.NoError(t, e.Client.Get(ctx, client.ObjectKeyFromObject(original), current))
				restored := current.DeepCopy()
				restored.Object["webhooks"] = original.Object["webhooks"]
				require.NoError(t, e.Client.Patch(ctx, restored, client.MergeFrom(current)))
			}
			e.waitForAdmission(t, ns, true)
		})
	}
	t.Cleanup(restore)
	return restore
}

// waitForAdmission waits until the API server refuses (checked) or admits (unchecked) an
// invalid App in ns, in a dry run: it takes up webhook configurations in the background.
func (e *Environment) waitForAdmission(t *testing.T, ns string, checked bool) {
	t.Helper()
	probe := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: appv1.AppSpec{Image: "not a reference"}}
	Eventually(t, func(c *require.Assertions) {
		err := e.Client.Create(context.Background(), probe.DeepCopy(), client.DryRunAll)
		c.Equal(checked, err != nil, "the webhooks check Apps in %s: %v", ns, err)
	})
}
