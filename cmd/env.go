package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mycompany/app-operator/internal/operator"
)

// EnvPrefix starts the environment variable of each flag: APP_OPERATOR_ and the flag's name in
// upper case, dashes as underscores (APP_OPERATOR_MAX_CONCURRENT_RECONCILES for
// --max-concurrent-reconciles). OLM's Subscription.spec.config sets a manager's environment,
// not its arguments, so this is how a Subscription configures it. A flag on the command line
// wins over its variable.
const EnvPrefix = "APP_OPERATOR_"

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// setFromEnv sets every flag of fs whose variable lookup finds, before fs parses the command
// line. It names each variable whose value the flag refuses.
func setFromEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		if v, ok := lookup(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: invalid value for --%s: %w", name, v, f.Name, err))
			}
		}
	})
	return errors.Join(errs...)
}

// MemoryLimitEnv carries the container's memory limit in bytes, passed down by the Deployment.
const MemoryLimitEnv = "MEMORY_LIMIT"

// memoryLimitShare is the part of the container's memory limit the Go runtime aims to stay
// under; the rest is for what it does not count (thread stacks outside the heap, the
// binary's text) and for the time the collector takes to catch up.
const memoryLimitShare = 0.9

// softMemoryLimit returns the Go runtime's soft memory limit from the environment: none when
// GOMEMLIMIT sets one itself (the runtime reads it) or the container's limit is not known,
// else 90% of the container's limit.
func softMemoryLimit(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	raw := getenv(MemoryLimitEnv)
	if raw == "" {
		return 0, nil
	}
	limit, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || limit <= 0 {
		return 0, fmt.Errorf("%s=%q: want the container's memory limit as a positive number of bytes", MemoryLimitEnv, raw)
	}
	return int64(math.Floor(float64(limit) * memoryLimitShare)), nil
}

// fillGCPercent is the collector's pace while the controller's caches first fill
// (operator.FillGCPercent), or 0 where GOGC sets the pace itself.
func fillGCPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return operator.FillGCPercent
}
