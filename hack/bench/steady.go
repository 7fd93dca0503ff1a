package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mycompany/app-operator/test/framework"
)

// managerStart is how long a restarted manager may take to be ready.
const managerStart = 2 * time.Minute

// steadyWindow counts the operator's writes over o.steady after a forced resync of every App:
// it restarts the manager with a sync period of o.resync, so that the new manager reconciles
// every App as it starts and again at each resync within the window, and compares every
// resourceVersion before and after. Then it restarts the manager with managerArgs alone, as the
// convergence phases run it. offset is where the audit log's unread part begins.
func steadyWindow(ctx context.Context, c *framework.Cluster, kubelet *framework.Kubelet, o options, managerArgs []string, token string, offset int64, r *Result) error {
	sa := kubelet.Operator().ServiceAccount
	before, err := resourceVersions(ctx, c)
	if err != nil {
		return err
	}
	if _, offset, err = writes(c.AuditLog(), offset, sa); err != nil {
		return err
	}
	op, err := kubelet.Restart(ctx, append(slices.Clone(managerArgs), "--sync-period="+o.resync.String()), managerStart)
	if err != nil {
		return err
	}
	time.Sleep(o.steady)
	if r.SteadyAllWrites, _, err = writes(c.AuditLog(), offset, sa); err != nil {
		return err
	}
	r.SteadyWrites = managedWrites(r.SteadyAllWrites)
	after, err := resourceVersions(ctx, c)
	if err != nil {
		return err
	}
	for k, v := range before {
		if after[k] != v {
			r.SteadyChangedRVs++
		}
	}
	f, err := framework.NewScraper(op.MetricsURL, token).Families(ctx)
	if err != nil {
		return err
	}
	// The restarted manager counts from zero: its start, then its resyncs.
	r.SteadyReconciles = framework.Counter(f, "operator_reconcile_count", "controller", "app")
	if r.SteadyReconciles < float64(2*o.apps) {
		return fmt.Errorf("the steady window saw %v reconciles, fewer than twice the %d Apps: the manager's start and a resync should each reconcile every App", r.SteadyReconciles, o.apps)
	}
	_, err = kubelet.Restart(ctx, managerArgs, managerStart)
	return err
}
