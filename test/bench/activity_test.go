package main

import (
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stack builds a sample of ms milliseconds of CPU whose stack holds the named functions, leaf
// first.
func stack(ms int64, functions ...string) *profile.Sample {
	s := &profile.Sample{Value: []int64{1, ms * 1e6}}
	for _, f := range functions {
		s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: f}}}})
	}
	return s
}

func TestByActivityCountsEachSampleForTheFirstActivityOnItsStack(t *testing.T) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			// A status patch of a custom resource.
			stack(30, "encoding/json.Marshal", "k8s.io/apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update",
				"k8s.io/apiserver/pkg/endpoints/handlers.PatchResource.func1"),
			// A conversion inside the decoding of a change from etcd: the webhook comes first.
			stack(20, "k8s.io/apiextensions-apiserver/pkg/apiserver/conversion.(*webhookConverter).Convert",
				"k8s.io/apiserver/pkg/storage/etcd3.(*watchChan).transform"),
			// Garbage collection assisted by a request counts as garbage collection.
			stack(5, "runtime.gcAssistAlloc", "runtime.mallocgc", "k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource"),
			stack(7, "k8s.io/apiserver/pkg/storage/etcd3.(*watchChan).transform"),
			stack(3, "syscall.Syscall"),
		},
	}
	got, err := byActivity(p)
	require.NoError(t, err)
	assert.InDeltaMapValues(t, map[string]float64{
		"custom resource status writes": 0.030,
		"conversion webhook":            0.020,
		"garbage collection":            0.005,
		"decoding changes from etcd":    0.007,
		otherActivity:                   0.003,
	}, got, 1e-9)
}

func TestByActivityRefusesAProfileWithoutCPUTime(t *testing.T) {
	_, err := byActivity(&profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}})
	assert.ErrorContains(t, err, "no CPU time")
}
