package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, args ...string) *options {
	t.Helper()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := bindFlags(fs)
	require.NoError(t, fs.Parse(args))
	return o
}

func TestTheDefaultsAndTheBundlesFlagsAreValid(t *testing.T) {
	assert.NoError(t, parse(t).validate())
	assert.NoError(t, parse(t, "--serve=controllers", "--metrics-bind-address=:8443", "--leader-elect", "--health-probe-bind-address=:8081", "--zap-encoder=json").validate())
	assert.NoError(t, parse(t, "--serve=webhooks", "--metrics-bind-address=:8444", "--health-probe-bind-address=:8082", "--zap-encoder=json").validate())
	assert.NoError(t, parse(t, "--max-concurrent-reconciles=1", "--webhook-port=65535",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s").validate())
}

func TestABadFlagIsRefusedByName(t *testing.T) {
	for args, want := range map[string]string{
		"--serve=everything":                  `--serve must be controllers, webhooks or all, got "everything"`,
		"--max-concurrent-reconciles=0":       "--max-concurrent-reconciles must be at least 1, got 0",
		"--webhook-drain-period=-1s":          "--webhook-drain-period must not be negative, got -1s",
		"--webhook-port=0":                    "--webhook-port must be between 1 and 65535, got 0",
		"--webhook-port=65536":                "--webhook-port must be between 1 and 65535, got 65536",
		"--kube-api-qps=0":                    "--kube-api-qps must be positive, got 0",
		"--kube-api-burst=0":                  "--kube-api-burst must be at least 1, got 0",
		"--sync-period=0":                     "--sync-period must be positive, got 0s",
		"--watch-namespaces=team-a,Team_B":    `--watch-namespaces: "Team_B" is not a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		"--leader-election-retry-period=0":    "--leader-election-retry-period must be positive, got 0s",
		"--leader-election-lease-duration=5s": "--leader-election-lease-duration (5s) must be longer than --leader-election-renew-deadline (10s)",
		"--leader-election-retry-period=9s":   "--leader-election-renew-deadline (10s) must be longer than 1.2 times --leader-election-retry-period (9s)",
	} {
		t.Run(args, func(t *testing.T) {
			err := parse(t, args).validate()
			require.Error(t, err)
			assert.Equal(t, want, err.Error())
		})
	}
}

func TestEveryBadFlagIsNamedAtOnce(t *testing.T) {
	err := parse(t, "--max-concurrent-reconciles=-2", "--sync-period=0", "--leader-election-renew-deadline=20s").validate()
	require.Error(t, err)
	assert.Equal(t, "--max-concurrent-reconciles must be at least 1, got -2\n"+
		"--sync-period must be positive, got 0s\n"+
		"--leader-election-lease-duration (15s) must be longer than --leader-election-renew-deadline (20s)", err.Error())
}

func TestWatchNamespacesAreTheListOLMPasses(t *testing.T) {
	for value, want := range map[string][]string{
		"":                  nil, // OLM's AllNamespaces target
		"team-a":            {"team-a"},
		"team-a,team-b":     {"team-a", "team-b"},
		" team-a , team-b,": {"team-a", "team-b"},
	} {
		t.Run(value, func(t *testing.T) {
			o := parse(t, "--watch-namespaces="+value)
			assert.Equal(t, want, o.namespaces())
			assert.NoError(t, o.validate())
		})
	}
}
