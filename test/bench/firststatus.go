package main

import (
	"context"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// firstStatus records, for each App, when its creation returned and when a watch first showed
// a status the operator wrote for it: how long a user waits to see an App described.
type firstStatus struct {
	mu      sync.Mutex
	created map[string]time.Time
	status  map[string]time.Time
}

func newFirstStatus() *firstStatus {
	return &firstStatus{created: map[string]time.Time{}, status: map[string]time.Time{}}
}

// record starts recording the first status of every App the watch of Apps shows.
// Creations are recorded with wasCreated.
func (f *firstStatus) record(ctx context.Context, watched cache.Cache) error {
	informer, err := watched.GetInformer(ctx, &appv1.App{})
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.observe(obj, time.Now()) },
		UpdateFunc: func(_, obj any) { f.observe(obj, time.Now()) },
	})
	return err
}

func (f *firstStatus) observe(obj any, at time.Time) {
	app, ok := obj.(*appv1.App)
	if !ok || app.Status.ObservedGeneration == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.status[app.Name]; !seen {
		f.status[app.Name] = at
	}
}

// wasCreated records that the creation of App name returned at at.
func (f *firstStatus) wasCreated(name string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created[name] = at
}

// latencies are the times from each App's creation to its first status, for the Apps that
// have both. A status the watch showed before the creation returned counts as no wait.
func (f *firstStatus) latencies() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for name, created := range f.created {
		if at, ok := f.status[name]; ok {
			out = append(out, max(at.Sub(created), 0))
		}
	}
	return out
}
