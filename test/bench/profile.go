package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/kubernetes"

	"github.com/mycompany/app-operator/test/localcluster"
)

// profileWindow is the length of each CPU profile the API server records during a phase. The
// last one may run past the phase's end by up to this long, with the cluster nearly idle.
const profileWindow = 5

// profileAPIServer records the API server's CPU profile in consecutive windows from now until
// the returned stop is called, and stop returns them merged into one: where the API server's
// CPU went during a phase, to compare with another phase (go tool pprof -diff_base).
func profileAPIServer(ctx context.Context, c *localcluster.Cluster) (stop func() (*profile.Profile, error)) {
	done := make(chan struct{})
	type merged struct {
		p   *profile.Profile
		err error
	}
	result := make(chan merged, 1)
	go func() {
		var windows []*profile.Profile
		for {
			raw, err := apiServerGet(ctx, c, "/debug/pprof/profile", "seconds", strconv.Itoa(profileWindow))
			if err != nil {
				result <- merged{err: fmt.Errorf("profiling the API server: %w", err)}
				return
			}
			p, err := profile.ParseData(raw)
			if err != nil {
				result <- merged{err: fmt.Errorf("reading the API server's profile: %w", err)}
				return
			}
			windows = append(windows, p)
			select {
			case <-done:
				p, err := profile.Merge(windows)
				result <- merged{p, err}
				return
			default:
			}
		}
	}()
	return func() (*profile.Profile, error) {
		close(done)
		m := <-result
		return m.p, m.err
	}
}

// writeProfile writes a profile where go tool pprof reads it.
func writeProfile(p *profile.Profile, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// apiServerGet reads a path of the API server that is not an API, with query parameters given
// as name, value pairs.
func apiServerGet(ctx context.Context, c *localcluster.Cluster, path string, params ...string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	req := cs.RESTClient().Get().AbsPath(path)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	return req.DoRaw(ctx)
}
