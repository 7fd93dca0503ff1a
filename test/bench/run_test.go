package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOptionsRefuseWhatTheBenchmarkCannotRunWithNamingTheFlag(t *testing.T) {
	good := options{apps: 1000, concurrency: 16, rounds: 3, steady: 2 * time.Minute, resync: time.Minute, timeout: 30 * time.Minute}
	assert.NoError(t, good.validate())
	with := func(change func(*options)) options {
		o := good
		change(&o)
		return o
	}
	for want, o := range map[string]options{
		"--apps must be at least 1, got 0":         with(func(o *options) { o.apps = 0 }),
		"--concurrency must be at least 1, got -1": with(func(o *options) { o.concurrency = -1 }),
		"--rounds must be at least 1, got 0":       with(func(o *options) { o.rounds = 0 }),
		"--resync must be positive, got 0s":        with(func(o *options) { o.resync = 0 }),
		"--timeout must be positive, got 0s":       with(func(o *options) { o.timeout = 0 }),
		"--steady must not be negative, got -1s":   with(func(o *options) { o.steady = -time.Second }),
		`--manager-arg must be a flag of the manager, such as --max-concurrent-reconciles=4, got "max-concurrent-reconciles=4"`: with(func(o *options) {
			o.managerArgs = []string{"--zap-log-level=info", "max-concurrent-reconciles=4"}
		}),
		"--manager-arg must not set --pprof-bind-address: the benchmark sets it to read the manager's heap": with(func(o *options) {
			o.managerArgs = []string{"--pprof-bind-address=:6060"}
		}),
		`--manager-env must be NAME=VALUE, such as GOGC=50, got "GOGC"`: with(func(o *options) { o.managerEnv = []string{"GOMEMLIMIT=1GiB", "GOGC"} }),
		`--manager-env must be NAME=VALUE, such as GOGC=50, got "=50"`:  with(func(o *options) { o.managerEnv = []string{"=50"} }),
	} {
		assert.EqualError(t, o.validate(), want)
	}
	assert.NoError(t, with(func(o *options) { o.steady = 0 }).validate(), "a window of zero lasts until the resync")
	assert.NoError(t, with(func(o *options) { o.managerArgs = []string{"--max-concurrent-reconciles=4"} }).validate())
	assert.NoError(t, with(func(o *options) { o.managerEnv = []string{"GOGC=100", "EMPTY="} }).validate(), "a value may be empty")
}
