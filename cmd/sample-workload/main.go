// Command sample-workload is the small web server that the sample App runs (config/samples) and
// the end-to-end tests deploy: it answers every path with 200 and the name of its pod, reports
// ready on /healthz, and shuts down gracefully on SIGTERM. For the autoscaling and rollback
// tests it can burn CPU on request (/work?ms=N) and be started never to become ready.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", ":8080", "Address to serve on.")
	neverReady := flag.Bool("never-ready", false, "Answer /healthz with 503 forever, as a broken release would.")
	flag.Parse()

	srv := &http.Server{Addr: *listen, Handler: handler(*neverReady), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("serving on %s", *listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func handler(neverReady bool) http.Handler {
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if neverReady {
			http.Error(w, "never ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 || ms > 10000 {
			http.Error(w, "ms: want a number of milliseconds from 0 to 10000", http.StatusBadRequest)
			return
		}
		burn(time.Duration(ms) * time.Millisecond)
		fmt.Fprintf(w, "worked %d ms on %s\n", ms, host)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "Hello from %s\n", host)
	})
	return mux
}

// burn keeps one CPU busy for d.
func burn(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
		}
	}
}
