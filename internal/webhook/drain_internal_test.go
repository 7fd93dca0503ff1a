package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// fakeServer records what DrainingServer registers and runs until its context ends.
type fakeServer struct {
	webhook.Server
	mux     *http.ServeMux
	started chan struct{}
}

func (f *fakeServer) Register(path string, h http.Handler) { f.mux.Handle(path, h) }

func (f *fakeServer) Start(ctx context.Context) error {
	close(f.started)
	<-ctx.Done()
	return nil
}

func TestADrainingServerServesOnAskingClientsToCloseThenStops(t *testing.T) {
	inner := &fakeServer{mux: http.NewServeMux(), started: make(chan struct{})}
	drained := make(chan time.Time)
	var waited time.Duration
	s := &DrainingServer{Server: inner, Drain: 10 * time.Second,
		after: func(d time.Duration) <-chan time.Time { waited = d; return drained }}
	s.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	// call returns the status of a call and its Connection header.
	call := func() (int, string) {
		rec := httptest.NewRecorder()
		inner.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", nil))
		return rec.Code, rec.Header().Get("Connection")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	<-inner.started
	_, connection := call()
	require.Empty(t, connection, "connections are kept while serving")

	cancel()
	require.Eventually(t, s.Draining, 10*time.Second, time.Millisecond)
	status, connection := call()
	require.Equal(t, http.StatusOK, status, "still serving while draining")
	require.Equal(t, "close", connection, "each client is told to close its connection")
	select {
	case err := <-done:
		t.Fatalf("stopped before the drain was over: %v", err)
	default:
	}

	drained <- time.Now()
	require.NoError(t, <-done, "stops once drained")
	require.Equal(t, 10*time.Second, waited, "for as long as asked")
}
