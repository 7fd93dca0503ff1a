package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
