package localcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Poll calls check every 200 ms until it returns true. A timeout says what was waited for.
func (c *Cluster) Poll(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (bool, error)) error {
	return c.PollEvery(ctx, 200*time.Millisecond, timeout, what, check)
}

// stopPolling ends a Poll at once: waiting longer cannot help.
type stopPolling struct{ error }

// PollEvery is Poll at another interval, for checks that cost the API server: a list of
// thousands of objects, say.
func (c *Cluster) PollEvery(ctx context.Context, interval, timeout time.Duration, what string, check func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := check(ctx)
		if errors.As(err, new(stopPolling)) {
			return false, err
		}
		if err != nil {
			last = err
			return false, nil //nolint:nilerr // kept, and reported if the wait times out
		}
		return ok, nil
	})
	var stop stopPolling
	if errors.As(err, &stop) {
		return fmt.Errorf("waiting for %s: %w", what, stop.error)
	}
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting %v for %s: %w (last error: %w)", timeout, what, err, last)
		}
		return fmt.Errorf("waiting %v for %s: %w", timeout, what, err)
	}
	return nil
}
