package main

import (
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCCyclesCountsAGoProcesssCollections(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	families := func() map[string]*dto.MetricFamily {
		gathered, err := reg.Gather()
		require.NoError(t, err)
		f := map[string]*dto.MetricFamily{}
		for _, mf := range gathered {
			f[mf.GetName()] = mf
		}
		return f
	}
	before := gcCycles(families())
	runtime.GC()
	runtime.GC()
	assert.GreaterOrEqual(t, gcCycles(families())-before, 2.0, "two collections more")
	assert.Zero(t, gcCycles(map[string]*dto.MetricFamily{}), "a process that exports no Go metrics")
}
