// Package cachesync keeps a reconcile from acting on a cache that has not seen the operator's
// own writes yet. The manager's cache learns of a write from its watch, after the write
// returns: a reconcile that runs in between would find a child it just created missing, or its
// own status write not applied, and write again or report a change twice.
//
// After each write the Tracker remembers the resourceVersion the API server returned; a
// reconcile that finds the cache older than that waits for the watch event, which brings the
// App back to the work queue. This is Cluster API's "defer the next reconcile until the cache
// is up to date", with the resourceVersion as the test rather than a guess of how long the
// cache lags.
package cachesync

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxWait is the longest a write is awaited. The cache shows a write within moments; one it
// still does not show after MaxWait was overtaken (the object was deleted, or the watch
// restarted and listed it anew), and the reconcile goes by what the cache shows.
const MaxWait = 10 * time.Second

// Tracker remembers the operator's writes until the cache shows them. It is safe for
// concurrent use.
type Tracker struct {
	// Clock tells the time; nil is the real clock.
	Clock clock.PassiveClock

	// writes holds the last write of each object the cache has not shown yet (ID to write).
	writes sync.Map
}

// ID names an object for the Tracker: its kind, namespace and name.
type ID struct {
	Kind string
	Key  client.ObjectKey
}

func (id ID) String() string { return id.Kind + " " + id.Key.String() }

type write struct {
	owner           client.ObjectKey
	resourceVersion uint64
	at              time.Time
}

// Wrote records a write made for owner; obj is the object as the write returned it.
func (t *Tracker) Wrote(owner client.ObjectKey, id ID, obj client.Object) {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return // an API server whose versions are not numbers cannot be compared: never wait
	}
	t.writes.Store(id, write{owner: owner, resourceVersion: rv, at: t.now()})
}

// Behind reports whether the cache is behind the operator's last write of an object, and how
// long to wait for it at most. cached is the object as the cache shows it, or nil when the cache
// does not have it. A write the cache has caught up with, or one awaited for MaxWait, is
// forgotten.
func (t *Tracker) Behind(id ID, cached client.Object) (bool, time.Duration) {
	v, ok := t.writes.Load(id)
	if !ok {
		return false, 0
	}
	w := v.(write)
	waited := t.now().Sub(w.at)
	if waited >= MaxWait || caughtUp(cached, w.resourceVersion) {
		t.writes.CompareAndDelete(id, v)
		return false, 0
	}
	return true, MaxWait - waited
}

func caughtUp(cached client.Object, written uint64) bool {
	if cached == nil {
		return false
	}
	rv, err := strconv.ParseUint(cached.GetResourceVersion(), 10, 64)
	return err != nil || rv >= written
}

// Forget drops the writes made for an owner that is gone.
func (t *Tracker) Forget(owner client.ObjectKey) {
	t.writes.Range(func(id, v any) bool {
		if v.(write).owner == owner {
			t.writes.Delete(id)
		}
		return true
	})
}

func (t *Tracker) now() time.Time {
	if t.Clock == nil {
		return time.Now()
	}
	return t.Clock.Now()
}
