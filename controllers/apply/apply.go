// Package apply brings an App's children to their desired state with server-side apply, and
// writes nothing when a child already matches. A converged App costs no API writes.
package apply

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
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
	Deleted   Result = "Deleted"
	// Recreated: the child was changed by someone else in a way server-side apply cannot undo
	// (a list item's key changed, so the operator's item and theirs would both remain). The
	// child was deleted, to be created again as desired by the next reconcile.
	Recreated Result = "Recreated"
	// Awaiting: Apply created the child less than CacheLag ago, as it is still desired, and the
	// cache does not show it yet. Nothing is written and no child is returned; the caller
	// looks again after CacheLag, when a child still missing from the cache is created again.
	Awaiting Result = "Awaiting"
)

// CacheLag is how long a child Apply created is taken to exist while the cache does not show
// it. The watch event of a write reaches the cache after the write returns: a reconcile that
// runs in between would otherwise apply the child again and report it created twice.
const CacheLag = 5 * time.Second

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
	// Clock tells the time; nil is the real clock.
	Clock clock.PassiveClock

	// created holds the children Apply created that the cache has not shown yet, by kind
	// and key (string to createdChild).
	created sync.Map
}

// createdChild is what Apply remembers of a child it created: its owner, the hash of the
// configuration applied, and when.
type createdChild struct {
	owner client.ObjectKey
	hash  string
	at    time.Time
}

// Apply makes the child match desired and returns the child as it now is. It writes only when
// the child is missing, when a field the operator applies differs, or when the desired
// configuration changed since the last apply.
//
// An object of the child's name that the owner does not control is left as it is
// (NotOwnedError), whether another controller owns it or none does. The cache shows only
// objects carrying the operator's label, so a child missing from it is looked for in the API
// server's own cache before it is created: an object without the label is never merged into,
// and a child of the owner's that lost the label is applied again. One that this Applier
// created less than CacheLag ago, with the same configuration, is not applied again
// (Awaiting).
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
	id := kind + " " + key.String()
	current := newEmpty(desired)
	err = a.Client.Get(ctx, key, current)
	if apierrors.IsNotFound(err) {
		if a.awaited(id, want) {
			return nil, Awaiting, nil
		}
		err = a.reader().Get(ctx, key, current, fromAPIServerCache)
	}
	result := Updated
	switch {
	case apierrors.IsNotFound(err):
		result = Created
	case err != nil:
		return nil, "", fmt.Errorf("reading %s %s: %w", kind, key, err)
	case !metav1.IsControlledBy(current, owner):
		return nil, "", &NotOwnedError{Kind: kind, Key: key}
	default:
		a.created.Delete(id)
		have, err := toMap(current)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", kind, key, err)
		}
		if contains(have, want) {
			return current, Unchanged, nil
		}
	}

	u := &unstructured.Unstructured{Object: want}
	u.SetGroupVersionKind(gvk)
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		switch {
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), secondControllerMessage):
			return nil, "", &NotOwnedError{Kind: kind, Key: key}
		case apierrors.IsInvalid(err) && result == Updated && appliedBefore(current, want):
			return a.recreate(ctx, kind, current)
		}
		return nil, "", fmt.Errorf("applying %s %s: %w", kind, key, err)
	}
	applied := newEmpty(desired)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied); err != nil {
		return nil, "", fmt.Errorf("reading applied %s %s: %w", kind, key, err)
	}
	if result == Created {
		a.created.Store(id, createdChild{owner: client.ObjectKeyFromObject(owner), hash: hashOf(want), at: a.now()})
	}
	return applied, result, nil
}

// fromAPIServerCache reads from the API server's watch cache rather than from etcd: a read as
// cheap as the API server can serve, which can only miss an object created in the last moments.
var fromAPIServerCache = &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}

// awaited reports whether this Applier created the child less than CacheLag ago, with the same
// configuration.
func (a *Applier) awaited(id string, want map[string]any) bool {
	v, ok := a.created.Load(id)
	if !ok {
		return false
	}
	c := v.(createdChild)
	return c.hash == hashOf(want) && a.now().Sub(c.at) < CacheLag
}

func (a *Applier) reader() client.Reader {
	if a.Reader == nil {
		return a.Client
	}
	return a.Reader
}

// Forget drops what Apply remembers of the children it created for an owner that is gone.
func (a *Applier) Forget(owner client.ObjectKey) {
	a.created.Range(func(id, c any) bool {
		if c.(createdChild).owner == owner {
			a.created.Delete(id)
		}
		return true
	})
}

func (a *Applier) now() time.Time {
	if a.Clock == nil {
		return time.Now()
	}
	return a.Clock.Now()
}

// secondControllerMessage is how the API server refuses an object a second controller.
const secondControllerMessage = "Only one reference can have Controller set to true"

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
