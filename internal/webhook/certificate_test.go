package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appwebhook "github.com/mycompany/app-operator/internal/webhook"
)

var csvKey = client.ObjectKey{Namespace: "operators", Name: "app-operator.v1.1.0"}

// keeper returns a keeper whose client answers each patch of the Secret with the next of
// answers (nil once they run out), and the patches it was sent.
func keeper(t *testing.T, answers ...error) (*appwebhook.CertificateKeeper, *[]client.Patch) {
	t.Helper()
	csv := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Namespace: csvKey.Namespace, Name: csvKey.Name, UID: "new-csv-uid"}}
	var patches []client.Patch
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(csv).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
			require.Equal(t, schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, obj.GetObjectKind().GroupVersionKind())
			require.Equal(t, client.ObjectKey{Namespace: "operators", Name: appwebhook.CertificateSecret}, client.ObjectKeyFromObject(obj))
			patches = append(patches, patch)
			if len(answers) == 0 {
				return nil
			}
			err := answers[0]
			answers = answers[1:]
			return err
		},
	}).Build()
	return &appwebhook.CertificateKeeper{Reader: c, Client: c, CSV: csvKey, Log: logr.Discard(),
		Backoff: &wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 100}}, &patches
}

func TestTheCertificateGainsTheRunningCSVAsAnOwnerAndKeepsItsOthers(t *testing.T) {
	k, patches := keeper(t)
	require.Error(t, k.Ready(nil), "not ready before the owner is added")
	require.NoError(t, k.Start(context.Background()))
	require.NoError(t, k.Ready(nil))
	require.Len(t, *patches, 1)
	p := (*patches)[0]
	require.Equal(t, types.StrategicMergePatchType, p.Type())
	body, err := p.Data(nil)
	require.NoError(t, err)

	// What the API server makes of it, for a Secret OLM made under the release before.
	old := metav1.OwnerReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion",
		Name: "app-operator.v1.0.0", UID: "old-csv-uid", Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false)}
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: appwebhook.CertificateSecret, Namespace: "operators",
		OwnerReferences: []metav1.OwnerReference{old}}, Data: map[string][]byte{"tls.crt": []byte("cert")}}
	original, err := json.Marshal(secret)
	require.NoError(t, err)
	patched, err := strategicpatch.StrategicMergePatch(original, body, corev1.Secret{})
	require.NoError(t, err)
	var got corev1.Secret
	require.NoError(t, json.Unmarshal(patched, &got))
	require.ElementsMatch(t, []metav1.OwnerReference{old, {APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion",
		Name: csvKey.Name, UID: "new-csv-uid", Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false)}}, got.OwnerReferences)
	require.Equal(t, secret.Data, got.Data, "the certificate itself is untouched")
	var sent map[string]any
	require.NoError(t, json.Unmarshal(body, &sent))
	require.Len(t, sent, 1, "the patch sends metadata only: %s", body)
	require.Contains(t, sent, "metadata")

	// Patched again (another replica, a restart), the owners stay as they are.
	again, err := strategicpatch.StrategicMergePatch(patched, body, corev1.Secret{})
	require.NoError(t, err)
	require.JSONEq(t, string(patched), string(again))
}

func TestTheKeeperRetriesWhatMayPassLater(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("the API server is restarting")
	k, patches := keeper(t, unavailable, apierrors.NewTimeoutError("slow", 1))
	require.NoError(t, k.Start(context.Background()))
	require.Len(t, *patches, 3)
	require.NoError(t, k.Ready(nil))
}

func TestTheKeeperGivesUpOnWhatCannotPassAndLetsThePodBeReady(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	for name, answer := range map[string]error{
		"forbidden":          apierrors.NewForbidden(secrets, appwebhook.CertificateSecret, nil),
		"no Secret from OLM": apierrors.NewNotFound(secrets, appwebhook.CertificateSecret),
	} {
		t.Run(name, func(t *testing.T) {
			k, patches := keeper(t, answer)
			require.NoError(t, k.Start(context.Background()))
			require.Len(t, *patches, 1, "no retry")
			require.NoError(t, k.Ready(nil), "OLM then issues a new certificate at the next upgrade, as without the keeper")
		})
	}
	t.Run("no ClusterServiceVersion", func(t *testing.T) {
		k, patches := keeper(t)
		k.CSV.Name = "app-operator.v9.9.9"
		require.NoError(t, k.Start(context.Background()))
		require.Empty(t, *patches)
		require.NoError(t, k.Ready(nil))
	})
}

func TestAStoppedKeeperReturns(t *testing.T) {
	k, _ := keeper(t, apierrors.NewServiceUnavailable("down"))
	k.Backoff = &wait.Backoff{Duration: time.Hour, Factor: 1, Steps: 10}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, k.Start(ctx), "a manager that stops is not held up")
}
