// Package apply brings an App's children to their desired state with server-side apply, and
// writes nothing when a child already matches. A converged App costs no API writes.
package apply

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/mycompany/app-operator/controllers/cachesync"
)

// FieldOwner is the field manager of every field the operator applies.
const FieldOwner = "app-operator"

// HashAnnotation records a hash of the configuration last applied to a child. A change of
// the App changes the hash, so fields the App stopped setting are removed even when
// everything still set matches.
const HashAnnotation = "mycompany.com/applied-hash"

// Result says what Apply or Remove did.
type Result string

// The results of Apply and Remove.
const (
	Unchanged Result = "Unchanged"
	Created   Result = "Created"
	Updated   Result = "Updated"
	// Reverted: the child had drifted from a configuration the operator applied before and
	// still wants, so someone else changed it; it was changed back.
	Reverted Result = "Reverted"
	Deleted  Result = "Deleted"
	// Recreated: the child was changed by someone else in a way server-side apply cannot undo
	// (a list item's key changed, so the operator's item and theirs would both remain). The
	// child was deleted, to be created again as desired by the next reconcile.
	Recreated Result = "Recreated"
	// Awaiting: the cache does not show Apply's last write of the child yet (see package
	// cachesync). Nothing is written and no child is returned; the watch event of that write
	// brings the owner back.
	Awaiting Result = "Awaiting"
)

// NotOwnedError reports a child's name taken by an object the App does not control.
type NotOwnedError struct {
	Kind string
	Key  client.ObjectKey
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s already exists and is not controlled by this App; rename or delete it", e.Kind, e.Key)
}

// Applier applies and removes the children of an owner.
type Applier struct {
	// Client reads from the operator's cache, which holds only objects carrying the
	// operator's label, and writes to the API server.
	Client client.Client
	// Reader reads from the API server, past the operator's cache: an object of a child's name
	// that lacks the operator's label. Nil means Client.
	Reader client.Reader
	// Writes remembers each write until the cache shows it; the reconciler shares it.
	Writes *cachesync.Tracker
}

// Apply makes the child match desired and returns the child as it now is. It writes only when
// the child is missing, when a field the operator applies differs, or when the desired
// configuration changed since the last apply.
//
// An object of the child's name that the owner does not control is left as it is
// (NotOwnedError), whether another controller owns it or none does. The cache shows only
// objects carrying the operator's label, so a child missing from it is looked for in the API
// server's own cache before it is created: an object without the label is never merged into,
// and a child of the owner's that lost the label is applied again. A child whose last write the
// cache does not show yet is left as it is (Awaiting). A child the cache keeps without its spec
// is judged by its hashes (OwnedHashAnnotation), and read whole from the API server's cache
// only when they show a change.
func (a *Applier) Apply(ctx context.Context, owner, desired client.Object) (client.Object, Result, error) {
	gvk, err := apiutil.GVKForObject(desired, a.Client.Scheme())
	if err != nil {
		return nil, "", err
	}
	kind := gvk.Kind
	want, err := applyConfiguration(desired)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", kind, client.ObjectKeyFromObject(desired), err)
	}

	key := client.ObjectKeyFromObject(desired)
	id := cachesync.ID{Kind: kind, Key: key}
	current, awaiting, err := a.read(ctx, id, desired, want)
	if awaiting {
		return nil, Awaiting, nil
	}
	result := Updated
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("reading %s %s: %w", kind, key, err)
	case current == nil:
		result = Created
	case !metav1.IsControlledBy(current, owner):
		return nil, "", &NotOwnedError{Kind: kind, Key: key}
	case asApplied(current, want):
		return current, Unchanged, nil
	default:
		have, err := toMap(current)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", kind, key, err)
		}
		if contains(have, want) {
			return current, Unchanged, nil
		}
		if appliedBefore(current, want) {
			result = Reverted
		}
	}

	u := &unstructured.Unstructured{Object: want}
	u.SetGroupVersionKind(gvk)
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		switch {
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), secondControllerMessage):
			return nil, "", &NotOwnedError{Kind: kind, Key: key}
		case apierrors.IsInvalid(err) && result == Reverted:
			return a.recreate(ctx, kind, current)
		}
		return nil, "", fmt.Errorf("applying %s %s: %w", kind, key, err)
	}
	applied := newEmpty(desired)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied); err != nil {
		return nil, "", fmt.Errorf("reading applied %s %s: %w", kind, key, err)
	}
	a.Writes.Wrote(client.ObjectKeyFromObject(owner), id, applied)
	return applied, result, nil
}

// read returns the child to judge, or nil when it does not exist. It comes from the cache,
// unless the cache lacks it or keeps it without its spec while someone else changed it since
// the operator applied what it still wants: then it is read whole from the API server's cache.
// awaiting says the cache does not show the operator's last write of the child yet.
func (a *Applier) read(ctx context.Context, id cachesync.ID, desired client.Object, want map[string]any) (current client.Object, awaiting bool, err error) {
	current = newEmpty(desired)
	err = a.Client.Get(ctx, id.Key, current)
	switch {
	case apierrors.IsNotFound(err):
		if behind, _ := a.Writes.Behind(id, nil); behind {
			return nil, true, nil
		}
	case err != nil:
		return nil, false, err
	default:
		if behind, _ := a.Writes.Behind(id, current); behind {
			return nil, true, nil
		}
		if !partial(current) || asApplied(current, want) || !appliedBefore(current, want) {
			return current, false, nil
		}
	}
	current = newEmpty(desired)
	if err := a.reader().Get(ctx, id.Key, current, fromAPIServerCache); err != nil {
		return nil, false, client.IgnoreNotFound(err)
	}
	return current, false, nil
}

// fromAPIServerCache reads from the API server's watch cache rather than from etcd: a read as
// cheap as the API server can serve, which can only miss an object created in the last moments.
var fromAPIServerCache = &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}

func (a *Applier) reader() client.Reader {
	if a.Reader == nil {
		return a.Client
	}
	return a.Reader
}

// secondControllerMessage is how the API server refuses an object a second controller.
const secondControllerMessage = "Only one reference can have Controller set to true"

// asApplied reports whether a cached child is exactly as the operator applied want: it
// carries want's hash, and the fields the operator owns still hash alike (OwnedHashAnnotation),
// so nobody changed or removed any of them.
func asApplied(cached client.Object, want map[string]any) bool {
	hash := hashOf(want)
	annotations := cached.GetAnnotations()
	return hash != "" && annotations[HashAnnotation] == hash && annotations[OwnedHashAnnotation] == hash
}

// partial reports whether a cached child is kept without its spec (see OwnedHashAnnotation).
func partial(cached client.Object) bool {
	_, ok := cached.GetAnnotations()[OwnedHashAnnotation]
	return ok
}

// appliedBefore reports whether the child carries the hash of exactly this configuration, that
// is, whether the same configuration was applied to it successfully before.
func appliedBefore(current client.Object, want map[string]any) bool {
	hash := hashOf(want)
	return hash != "" && current.GetAnnotations()[HashAnnotation] == hash
}

// recreate deletes a child that someone changed beyond what server-side apply can revert.
func (a *Applier) recreate(ctx context.Context, kind string, current client.Object) (client.Object, Result, error) {
	uid := current.GetUID()
	if err := a.Client.Delete(ctx, current, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return nil, "", fmt.Errorf("deleting %s %s to recreate it: %w", kind, client.ObjectKeyFromObject(current), err)
	}
	return nil, Recreated, nil
}

// Remove deletes a child the owner no longer wants. Objects the owner does not control are
// left alone.
func (a *Applier) Remove(ctx context.Context, owner, obj client.Object) (Result, error) {
	gvk, err := apiutil.GVKForObject(obj, a.Client.Scheme())
	if err != nil {
		return "", err
	}
	kind := gvk.Kind
	key := client.ObjectKeyFromObject(obj)
	current := newEmpty(obj)
	if err := a.Client.Get(ctx, key, current); err != nil {
		if apierrors.IsNotFound(err) {
			return Unchanged, nil
		}
		return "", fmt.Errorf("reading %s %s: %w", kind, key, err)
	}
	if !metav1.IsControlledBy(current, owner) || current.GetDeletionTimestamp() != nil {
		return Unchanged, nil
	}
	uid := current.GetUID()
	if err := a.Client.Delete(ctx, current, client.Preconditions{UID: &uid}); err != nil {
		if apierrors.IsNotFound(err) {
			return Unchanged, nil
		}
		return "", fmt.Errorf("deleting %s %s: %w", kind, key, err)
	}
	return Deleted, nil
}

func newEmpty(obj client.Object) client.Object {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}
