package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/olm"
)

// CertificateSecret is the Secret in which OLM keeps the webhooks' serving certificate and its
// CA: OLM names it after the Service it makes for the manager's Deployment.
const CertificateSecret = "app-operator-controller-manager-service-cert"

// CertificateKeeper keeps OLM's serving certificate through an upgrade, so that the API server
// goes on trusting the pods that serve the webhooks.
//
// OLM owns the certificate's Secret by the ClusterServiceVersion that made it. An upgrade
// reuses the Secret while its certificate is valid, without adding the new
// ClusterServiceVersion to its owners, so the garbage collector deletes it together with the
// ClusterServiceVersion replaced. OLM then issues a new CA, gives it to the webhook
// configurations and rolls the manager out a second time; until the older pods are gone,
// the API server refuses their certificate ("x509: certificate signed by unknown authority")
// and every App write fails. The keeper adds the running ClusterServiceVersion to the
// Secret's owners before the pod reports ready, and so before OLM replaces the older one.
type CertificateKeeper struct {
	// Reader reads the ClusterServiceVersion; Client patches the Secret's metadata.
	Reader client.Reader
	Client client.Client
	// CSV names the ClusterServiceVersion that installed the manager, in its namespace,
	// where the Secret is.
	CSV client.ObjectKey
	// Backoff paces the attempts while the API server fails; nil means a second, doubling up
	// to a minute.
	Backoff *wait.Backoff
	Log     logr.Logger

	done atomic.Bool
}

// NeedLeaderElection is false: every replica serves the webhooks, so any may start first.
func (k *CertificateKeeper) NeedLeaderElection() bool { return false }

// Start adds the owner, retrying what may pass later, and returns once it is done, or once
// the API server has said it cannot be done (then OLM rotates the certificate as before).
func (k *CertificateKeeper) Start(ctx context.Context) error {
	defer k.done.Store(true)
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute}
	if k.Backoff != nil {
		b = *k.Backoff
	}
	err := wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		err := k.keep(ctx)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsInvalid(err):
			return false, err // final: nothing to keep, or not allowed to
		default:
			k.Log.Info("cannot keep the webhooks' certificate yet; retrying", "error", err.Error())
			return false, nil
		}
	})
	switch {
	case err == nil:
		k.Log.Info("the webhooks' certificate is kept through upgrades", "secret", CertificateSecret, "owner", k.CSV.Name)
	case ctx.Err() != nil:
	default:
		k.Log.Error(err, "the webhooks' certificate will be issued anew at the next upgrade", "secret", CertificateSecret)
	}
	return nil
}

// Ready fails until Start has returned.
func (k *CertificateKeeper) Ready(_ *http.Request) error {
	if !k.done.Load() {
		return errors.New("the webhooks' certificate is not kept yet")
	}
	return nil
}

// keep adds the ClusterServiceVersion to the Secret's owners, as OLM adds one: neither a
// controller nor blocking its owner's deletion. A strategic merge patch merges owner
// references by UID, so the owners already there stay, and the Secret's data is neither
// read nor sent.
func (k *CertificateKeeper) keep(ctx context.Context) error {
	owner, err := olm.Owner(ctx, k.Reader, k.CSV)
	if err != nil {
		return fmt.Errorf("reading ClusterServiceVersion %s: %w", k.CSV, err)
	}
	owner.Controller, owner.BlockOwnerDeletion = ptr.To(false), ptr.To(false)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{owner}}})
	if err != nil {
		return err
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	secret.SetNamespace(k.CSV.Namespace)
	secret.SetName(CertificateSecret)
	if err := k.Client.Patch(ctx, secret, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return fmt.Errorf("adding ClusterServiceVersion %s to the owners of Secret %s: %w", owner.Name, CertificateSecret, err)
	}
	return nil
}
