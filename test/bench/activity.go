package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// activities name what the API server's CPU did, each by the frames on a stack that show it.
// A sample counts for the first activity, in this order, with one of its frames on the
// sample's stack: garbage collection and auditing come first because they run inside
// requests, the webhooks before the requests that call them, and requests before the
// connections they arrive on.
var activities = []struct {
	name   string
	frames []string
}{
	{"garbage collection", []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"audit logging", []string{"k8s.io/apiserver/pkg/audit.", "k8s.io/apiserver/plugin/pkg/audit/"}},
	{"admission webhooks", []string{"k8s.io/apiserver/pkg/admission/plugin/webhook/"}},
	{"conversion webhook", []string{"apiextensions-apiserver/pkg/apiserver/conversion.(*webhookConverter)"}},
	{"custom resource status writes", []string{"apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update"}},
	{"custom resource creates", []string{"apiextensions-apiserver/pkg/apiserver.(*crdHandler).serveResource.CreateResource"}},
	{"server-side applies", []string{"k8s.io/apiserver/pkg/endpoints/handlers.(*applyPatcher)"}},
	{"decoding changes from etcd", []string{"k8s.io/apiserver/pkg/storage/etcd3.(*watchChan)"}},
	{"serving watches", []string{"k8s.io/apiserver/pkg/storage/cacher.", "k8s.io/apiserver/pkg/endpoints/handlers.serveWatch", "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer)"}},
	{"other requests", []string{"k8s.io/apiserver/pkg/endpoints/", "k8s.io/apiserver/pkg/server/"}},
	// Stacks deeper than the profiler records lose the request they belong to.
	{"field management, request unknown", []string{"k8s.io/apimachinery/pkg/util/managedfields/", "sigs.k8s.io/structured-merge-diff/"}},
	{"HTTP/2 and TLS with clients", []string{"golang.org/x/net/http2.", "net/http.", "crypto/tls."}},
	{"etcd client", []string{"go.etcd.io/etcd/client/", "google.golang.org/grpc/"}},
	{"the API server's own watches", []string{"k8s.io/client-go/"}},
}

// otherActivity is what no activity's frames show.
const otherActivity = "other"

// byActivity returns the CPU seconds of a CPU profile by activity.
func byActivity(p *profile.Profile) (map[string]float64, error) {
	cpu := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" && t.Unit == "nanoseconds" })
	if cpu < 0 {
		return nil, fmt.Errorf("the profile has no CPU time in nanoseconds")
	}
	seconds := map[string]float64{}
	for _, s := range p.Sample {
		seconds[activityOf(s)] += float64(s.Value[cpu]) / 1e9
	}
	return seconds, nil
}

func activityOf(s *profile.Sample) string {
	for _, a := range activities {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && slices.ContainsFunc(a.frames, func(f string) bool { return strings.Contains(line.Function.Name, f) }) {
					return a.name
				}
			}
		}
	}
	return otherActivity
}

// activityNames lists the activities in their order, other last.
func activityNames() []string {
	names := make([]string, 0, len(activities)+1)
	for _, a := range activities {
		names = append(names, a.name)
	}
	return append(names, otherActivity)
}
