package webhook

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DrainingServer is a webhook server that stops without failing a call. The API server keeps
// its connections to a webhook's pods open and sends further calls over them, to a stopping
// pod too, whatever its Service says. A server that closed them at once would race a call
// being sent on one ("broken pipe"), and a fail-closed webhook would refuse that write. So when
// told to stop, it serves every call for Drain more, answering each with "Connection: close",
// so that the API server closes each connection after its next call; only then does it stop,
// finishing the calls in flight.
type DrainingServer struct {
	webhook.Server
	// Drain is how long the server goes on serving once told to stop.
	Drain time.Duration

	draining atomic.Bool
	// after waits for the drain; nil means time.After.
	after func(time.Duration) <-chan time.Time
}

// Register serves a webhook at path.
func (s *DrainingServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		hook.ServeHTTP(w, r)
	}))
}

// Start serves until ctx ends and Drain has passed since.
func (s *DrainingServer) Start(ctx context.Context) error {
	serving, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-serving.Done():
			return // the server stopped by itself
		}
		s.draining.Store(true)
		after := s.after
		if after == nil {
			after = time.After
		}
		select {
		case <-after(s.Drain):
		case <-serving.Done():
		}
		stop()
	}()
	return s.Server.Start(serving)
}

// Draining says whether the server has been told to stop.
func (s *DrainingServer) Draining() bool { return s.draining.Load() }
