package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mycompany/app-operator/internal/checkout"
	"github.com/mycompany/app-operator/internal/operator"
)

func TestEnvironmentVariablesSetFlagsTheCommandLineDoesNot(t *testing.T) {
	for name, tc := range map[string]struct {
		env     map[string]string
		args    []string
		want    func(*testing.T, *options)
		wantErr string
	}{
		"a variable sets its flag": {
			env: map[string]string{"APP_OPERATOR_MAX_CONCURRENT_RECONCILES": "32", "APP_OPERATOR_SYNC_PERIOD": "1h"},
			want: func(t *testing.T, o *options) {
				assert.Equal(t, 32, o.maxConcurrentReconciles)
				assert.Equal(t, time.Hour, o.syncPeriod)
			},
		},
		"the command line wins": {
			env:  map[string]string{"APP_OPERATOR_MAX_CONCURRENT_RECONCILES": "32"},
			args: []string{"--max-concurrent-reconciles=12"},
			want: func(t *testing.T, o *options) { assert.Equal(t, 12, o.maxConcurrentReconciles) },
		},
		"zap's flags too": {
			env:  map[string]string{"APP_OPERATOR_ZAP_LOG_LEVEL": "debug"},
			want: func(t *testing.T, o *options) { assert.NotNil(t, o.zap.Level) },
		},
		"other variables are ignored": {
			env:  map[string]string{"MAX_CONCURRENT_RECONCILES": "32", "APP_OPERATOR_UNKNOWN": "x"},
			want: func(t *testing.T, o *options) { assert.Equal(t, 8, o.maxConcurrentReconciles) },
		},
		"a bad value is refused naming the variable and the flag": {
			env:     map[string]string{"APP_OPERATOR_KUBE_API_QPS": "fast", "APP_OPERATOR_LEADER_ELECT": "maybe"},
			wantErr: `APP_OPERATOR_KUBE_API_QPS="fast": invalid value for --kube-api-qps: parse error` + "\n" + `APP_OPERATOR_LEADER_ELECT="maybe": invalid value for --leader-elect: parse error`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("manager", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o := bindFlags(fs)
			err := setFromEnv(fs, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.ElementsMatch(t, strings.Split(tc.wantErr, "\n"), strings.Split(err.Error(), "\n"))
				return
			}
			require.NoError(t, err)
			require.NoError(t, fs.Parse(tc.args))
			tc.want(t, o)
		})
	}
}

func TestTheSoftMemoryLimitIsNinetyPercentOfTheContainers(t *testing.T) {
	for name, tc := range map[string]struct {
		env     map[string]string
		want    int64
		wantErr string
	}{
		"from the container's limit": {env: map[string]string{"MEMORY_LIMIT": "268435456"}, want: 241591910},
		"GOMEMLIMIT wins":            {env: map[string]string{"MEMORY_LIMIT": "268435456", "GOMEMLIMIT": "200MiB"}},
		"no limit known":             {},
		"not a number":               {env: map[string]string{"MEMORY_LIMIT": "256Mi"}, wantErr: `MEMORY_LIMIT="256Mi": want the container's memory limit as a positive number of bytes`},
		"zero":                       {env: map[string]string{"MEMORY_LIMIT": "0"}, wantErr: `MEMORY_LIMIT="0": want the container's memory limit as a positive number of bytes`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := softMemoryLimit(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTheCollectorPacesFasterWhileTheCachesFillUnlessGOGCSetsItsPace(t *testing.T) {
	assert.Equal(t, operator.FillGCPercent, fillGCPercent(func(string) string { return "" }))
	assert.Zero(t, fillGCPercent(func(k string) string { return map[string]string{"GOGC": "200"}[k] }), "GOGC wins")
}

// TestTheInstallGuideGivesEachVariablesDefault holds docs/install.md's table of variables
// against the manager's flags: each variable names a flag, and its default is the flag's.
func TestTheInstallGuideGivesEachVariablesDefault(t *testing.T) {
	root, err := checkout.Root()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	require.NoError(t, err)
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	bindFlags(fs)
	rows := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| `"+EnvPrefix) {
			continue
		}
		cells := strings.Split(line, "|")
		names, defaults := strings.Split(cells[1], ","), strings.Split(cells[2], ",")
		require.Len(t, defaults, len(names), "one default for each variable: %s", line)
		for i, name := range names {
			name = strings.Trim(strings.TrimSpace(name), "`")
			flagName := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix), "_", "-"))
			f := fs.Lookup(flagName)
			require.NotNil(t, f, "%s names no flag of the manager (--%s)", name, flagName)
			if f.DefValue == "" {
				continue // the library's default, which the flag does not show (zap's level, info)
			}
			assert.Equal(t, normalDefault(f.DefValue), normalDefault(strings.TrimSpace(defaults[i])), "the default of %s (--%s)", name, flagName)
			rows++
		}
	}
	assert.GreaterOrEqual(t, rows, 5, "the table was read")
}

// normalDefault writes a duration one way: 10h and 10h0m0s alike.
func normalDefault(v string) string {
	if d, err := time.ParseDuration(v); err == nil {
		return d.String()
	}
	return v
}
