package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// auditPolicy logs, at Metadata level, the writes to the objects the operator manages and to
// the Events and Leases it writes, and the reads of single children, which the operator makes
// only when its cache lacks a child or keeps it without a spec that someone changed. The API server evaluates audit rules for the authenticated
// user, before impersonation, so the operator's own requests are picked out when counting.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: mycompany.com
    resources: ["apps", "apps/status"]
  - group: apps
    resources: ["deployments", "deployments/scale"]
  - group: ""
    resources: ["services", "events"]
  - group: autoscaling
    resources: ["horizontalpodautoscalers"]
  - group: policy
    resources: ["poddisruptionbudgets"]
  - group: events.k8s.io
    resources: ["events"]
  - group: coordination.k8s.io
    resources: ["leases"]
- level: Metadata
  verbs: ["get"]
  resources:
  - group: apps
    resources: ["deployments"]
  - group: ""
    resources: ["services"]
  - group: autoscaling
    resources: ["horizontalpodautoscalers"]
  - group: policy
    resources: ["poddisruptionbudgets"]
- level: None
`

// managed are the resources written on behalf of Apps; Events and Leases are counted apart.
var managed = map[string]bool{
	"apps": true, "apps/status": true, "deployments": true, "services": true,
	"horizontalpodautoscalers": true, "poddisruptionbudgets": true,
}

// requests counts, in the audit log from offset on, the operator's writes and reads of
// children by "verb resource".
func requests(path string, offset int64, user string) (map[string]int, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	// The API server keeps a rotated log beside the current one, as audit-<time>.log.
	rotated, err := filepath.Glob(strings.TrimSuffix(path, ".log") + "-*.log")
	if err != nil {
		return nil, offset, err
	}
	if len(rotated) > 0 {
		return nil, offset, fmt.Errorf("the API server rotated its audit log into %s: the requests logged there are not counted", strings.Join(rotated, ", "))
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	counts := map[string]int{}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial last line is read at the next call
		}
		offset += int64(len(line))
		var ev struct {
			Stage            string `json:"stage"`
			Verb             string `json:"verb"`
			User             struct{ Username string }
			ImpersonatedUser *struct{ Username string } `json:"impersonatedUser"`
			ObjectRef        *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Stage != "ResponseComplete" || ev.ObjectRef == nil {
			continue
		}
		who := ev.User.Username
		if ev.ImpersonatedUser != nil {
			who = ev.ImpersonatedUser.Username
		}
		if who != user {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		counts[ev.Verb+" "+res]++
	}
	return counts, offset, nil
}

// managedWrites sums the writes to managed resources.
func managedWrites(counts map[string]int) int {
	return managedRequests(counts, func(verb string) bool { return verb != "get" })
}

// managedReads sums the reads of managed resources.
func managedReads(counts map[string]int) int {
	return managedRequests(counts, func(verb string) bool { return verb == "get" })
}

func managedRequests(counts map[string]int, verbs func(string) bool) int {
	n := 0
	for k, v := range counts {
		verb, resource, _ := strings.Cut(k, " ")
		if verbs(verb) && managed[resource] {
			n += v
		}
	}
	return n
}
