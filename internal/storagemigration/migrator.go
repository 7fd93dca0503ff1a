// Package storagemigration moves every stored App to the CRD's storage version and then drops older
// versions from the CRD's status.storedVersions, so that a later release may stop serving
// them. The API server never rewrites stored objects itself, and OLM refuses a CRD that
// drops a version still listed in storedVersions.
package storagemigration

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/operator-framework/operator-lib/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/metrics"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=apps.mycompany.com
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=patch,resourceNames=apps.mycompany.com
// +kubebuilder:rbac:groups=mycompany.com,resources=apps,verbs=list;patch

// CRDName is the App CRD.
const CRDName = "apps.mycompany.com"

// Reasons of the Upgradeable condition and of Events.
const (
	ReasonMigrating = "StorageMigrationInProgress"
	ReasonMigrated  = "StorageMigrated"
	ReasonFailed    = "StorageMigrationFailed"
)

// Migrator checks the App CRD when the manager starts and every Interval after, and migrates
// when its storedVersions list more than the storage version. A failed migration is retried
// sooner, with a backoff from two seconds up to Interval: right after an upgrade, the API
// server may not reach the conversion webhook until OLM has injected its CA into the CRD again.
type Migrator struct {
	// Client writes Apps and the CRD's status.
	Client client.Client
	// APIReader reads the CRD and lists Apps from the API server, not the cache.
	APIReader client.Reader
	// Upgradeable, when set, is False while a migration is due, so that OLM does not
	// replace the operator with a release that may no longer read the older version.
	Upgradeable conditions.Condition
	// Recorder emits Events on the CRD.
	Recorder events.EventRecorder
	// Log receives what the migration does and why it failed.
	Log logr.Logger
	// Interval between checks.
	Interval time.Duration
	// PageSize is the number of Apps read per list request.
	PageSize int64
}

// NeedLeaderElection makes only the leader migrate.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start checks and migrates until ctx ends.
func (m *Migrator) Start(ctx context.Context) error {
	backoff := 2 * time.Second
	for {
		wait := m.Interval
		if err := m.Migrate(ctx); err != nil && ctx.Err() == nil {
			wait = min(backoff, m.Interval)
			backoff *= 2
			m.Log.Error(err, "storage migration failed; retrying", "after", wait)
		} else {
			backoff = 2 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Migrate rewrites every App in the CRD's storage version if the CRD lists an older stored
// version, then removes the older versions from status.storedVersions.
func (m *Migrator) Migrate(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.APIReader.Get(ctx, client.ObjectKey{Name: CRDName}, crd); err != nil {
		return fmt.Errorf("reading CRD %s: %w", CRDName, err)
	}
	storage := storageVersion(crd)
	stale := slices.DeleteFunc(slices.Clone(crd.Status.StoredVersions), func(v string) bool { return v == storage })
	metrics.StoredVersions.Reset()
	for _, v := range crd.Status.StoredVersions {
		metrics.StoredVersions.WithLabelValues(CRDName, v).Set(1)
	}
	if len(stale) == 0 {
		return m.setUpgradeable(ctx, metav1.ConditionTrue, ReasonMigrated, "every App is stored as "+storage)
	}
	if err := m.setUpgradeable(ctx, metav1.ConditionFalse, ReasonMigrating,
		fmt.Sprintf("rewriting Apps stored as %v in %s", stale, storage)); err != nil {
		return err
	}
	n, err := m.rewriteAll(ctx)
	if err != nil {
		m.Recorder.Eventf(crd, nil, "Warning", ReasonFailed, "Migrate", "rewriting Apps in %s: %v", storage, err)
		return err
	}
	patch := client.MergeFromWithOptions(crd.DeepCopy(), client.MergeFromWithOptimisticLock{})
	crd.Status.StoredVersions = []string{storage}
	if err := m.Client.Status().Patch(ctx, crd, patch); err != nil {
		return fmt.Errorf("removing %v from the storedVersions of CRD %s: %w", stale, CRDName, err)
	}
	m.Log.Info("migrated every App to the storage version", "storageVersion", storage, "rewritten", n, "removedStoredVersions", stale)
	m.Recorder.Eventf(crd, nil, "Normal", ReasonMigrated, "Migrate",
		"rewrote %d Apps in %s and removed %v from storedVersions", n, storage, stale)
	metrics.StoredVersions.Reset()
	metrics.StoredVersions.WithLabelValues(CRDName, storage).Set(1)
	return m.setUpgradeable(ctx, metav1.ConditionTrue, ReasonMigrated, "every App is stored as "+storage)
}

// rewriteAll writes every App back unchanged, which the API server stores in the storage
// version. The write names the resourceVersion it read: a conflict means someone else wrote
// the App since, which stored it in the storage version too.
func (m *Migrator) rewriteAll(ctx context.Context) (int, error) {
	n := 0
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appv1.GroupVersion.WithKind("AppList"))
	for {
		if err := m.APIReader.List(ctx, list, client.Limit(m.PageSize), client.Continue(list.Continue)); err != nil {
			return n, fmt.Errorf("listing Apps: %w", err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			item.SetGroupVersionKind(appv1.GroupVersion.WithKind("App"))
			body := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q}}`, item.ResourceVersion)
			err := m.Client.Patch(ctx, item, client.RawPatch(types.MergePatchType, body))
			switch {
			case err == nil:
				n++
				metrics.MigratedApps.Inc()
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			default:
				return n, fmt.Errorf("rewriting App %s/%s: %w", item.Namespace, item.Name, err)
			}
		}
		if list.Continue == "" {
			return n, nil
		}
	}
}

func (m *Migrator) setUpgradeable(ctx context.Context, status metav1.ConditionStatus, reason, message string) error {
	if m.Upgradeable == nil {
		return nil
	}
	err := m.Upgradeable.Set(ctx, status, conditions.WithReason(reason), conditions.WithMessage(message))
	if apierrors.IsNotFound(err) {
		// OLM had not made the OperatorCondition yet; the next check sets it.
		return nil
	}
	return err
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}
