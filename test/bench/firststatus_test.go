package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func TestFirstStatusTimesEachAppFromItsCreationToItsFirstStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := func(name string, observed int64) *appv1.App {
		return &appv1.App{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: appv1.AppStatus{ObservedGeneration: observed}}
	}
	f := newFirstStatus()
	f.wasCreated("a", t0)
	f.observe(app("a", 0), t0.Add(100*time.Millisecond)) // no status yet
	f.observe(app("a", 1), t0.Add(300*time.Millisecond))
	f.observe(app("a", 1), t0.Add(900*time.Millisecond)) // not the first
	// A status the watch showed before the creation returned: no wait.
	f.observe(app("b", 1), t0.Add(time.Second))
	f.wasCreated("b", t0.Add(2*time.Second))
	f.wasCreated("c", t0) // never described
	f.observe("not an App", t0)

	require.ElementsMatch(t, []time.Duration{300 * time.Millisecond, 0}, f.latencies())
}
