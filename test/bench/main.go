// Command bench measures App Operator on a local control plane with the real OLM (make bench):
// how fast N Apps converge against a baseline that creates the same Deployments and Services
// directly, how many API writes the operator makes per App and in a steady state that begins
// with a restart of the manager and includes a resync of every App, its heap per App (after the
// convergence, and again after a restart of the manager), and its reconcile latency. It prints
// one BENCH line and writes the figures as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"go.uber.org/zap/zapcore"

	"github.com/mycompany/app-operator/test/localcluster"
)

// Result is what a run measured.
type Result struct {
	Apps        int `json:"apps"`
	Concurrency int `json:"concurrency"`
	// ManagerArgs are the arguments added to the manager's by --manager-arg, ManagerEnv the
	// variables set in its environment by --manager-env.
	ManagerArgs []string `json:"manager_args,omitempty"`
	ManagerEnv  []string `json:"manager_env,omitempty"`
	// The round with the median ratio.
	comparison
	CreateSeconds     float64        `json:"create_apps_s"`
	BaselineCreate    float64        `json:"create_baseline_s"`
	WritesPerApp      float64        `json:"writes_per_app"`
	ReadsPerApp       float64        `json:"reads_per_app"`
	ConvergenceWrites map[string]int `json:"convergence_requests_by_verb_and_resource"`
	SteadyWrites      int            `json:"steady_writes"`
	SteadyReads       int            `json:"steady_reads"`
	SteadyAllWrites   map[string]int `json:"steady_requests_by_verb_and_resource"`
	SteadyReconciles  float64        `json:"steady_reconciles"`
	SteadySeconds     float64        `json:"steady_window_s"`
	SteadyChangedRVs  int            `json:"steady_changed_resource_versions"`
	HeapBytes         float64        `json:"heap_inuse_bytes"`
	HeapBaseBytes     float64        `json:"heap_inuse_bytes_without_apps"`
	// The live objects' bytes, without the rest of the spans holding them.
	HeapLiveBytes     float64 `json:"heap_alloc_bytes"`
	HeapLiveBaseBytes float64 `json:"heap_alloc_bytes_without_apps"`
	HeapKiBMarginal   float64 `json:"heap_kib_per_app_above_base"`
	HeapKiBPerApp     float64 `json:"heap_kib_per_app"`
	// The heap of the manager restarted after convergence, once it has reconciled every App
	// from its new cache: the same objects, without what the convergence left among them.
	HeapRestartedBytes     float64 `json:"heap_inuse_bytes_restarted"`
	HeapLiveRestartedBytes float64 `json:"heap_alloc_bytes_restarted"`
	HeapKiBPerAppRestarted float64 `json:"heap_kib_per_app_restarted"`
	// What the restarted manager spent from its start until it had reconciled every App: CPU
	// seconds, and garbage collections.
	RestartedCPUSeconds float64 `json:"restarted_manager_cpu_s"`
	RestartedGCCycles   float64 `json:"restarted_gc_cycles"`
	P50Millis           float64 `json:"reconcile_p50_ms"`
	P99Millis           float64 `json:"reconcile_p99_ms"`
	// The baseline's time to create one Deployment and Service pair: what a reconcile that
	// creates an App's children cannot beat on the same API server.
	BaselineP50Millis float64 `json:"baseline_pair_create_p50_ms"`
	BaselineP99Millis float64 `json:"baseline_pair_create_p99_ms"`
	// The time from an App's creation to the first status a watch shows for it, over every
	// App of the first round.
	FirstStatusP50Millis float64 `json:"first_status_p50_ms"`
	FirstStatusP99Millis float64 `json:"first_status_p99_ms"`
	// CPU milliseconds per App of the median round's convergence: the manager's, and the
	// control plane's (every other component) beside it.
	ManagerCPUMillisPerApp      float64 `json:"manager_cpu_ms_per_app"`
	ControlPlaneCPUMillisPerApp float64 `json:"control_plane_cpu_ms_per_app"`
	// Every comparison of the two phases. The first is the run's full measurement.
	Rounds []Round `json:"rounds,omitempty"`
}

// kibPerApp divides bytes among the run's Apps, in KiB.
func (r Result) kibPerApp(bytes float64) float64 { return bytes / 1024 / float64(r.Apps) }

func (r Result) line() string {
	return fmt.Sprintf("BENCH apps=%d converge_s=%.2f baseline_s=%.2f ratio=%.2f writes_per_app=%.2f reads_per_app=%.2f steady_writes=%d steady_reads=%d heap_kib_per_app=%.2f p50_ms=%.1f p99_ms=%.1f baseline_pair_p99_ms=%.1f first_status_p99_ms=%.1f manager_cpu_ms_per_app=%.2f",
		r.Apps, r.ConvergeSeconds, r.BaselineSeconds, r.Ratio, r.WritesPerApp, r.ReadsPerApp, r.SteadyWrites, r.SteadyReads, r.HeapKiBPerApp, r.P50Millis, r.P99Millis,
		r.BaselineP99Millis, r.FirstStatusP99Millis, r.ManagerCPUMillisPerApp)
}

func main() {
	var o options
	flag.IntVar(&o.apps, "apps", 1000, "Number of Apps.")
	flag.IntVar(&o.concurrency, "concurrency", 16, "Creations in flight at once, for the operator and the baseline alike.")
	flag.IntVar(&o.rounds, "rounds", 3, "Comparisons of the operator with the baseline, alternating which goes first; the median ratio is reported.")
	flag.DurationVar(&o.steady, "steady", 2*time.Minute, "Shortest length of the steady-state window, which begins with a restart of the manager and lasts until its first resync.")
	flag.DurationVar(&o.resync, "resync", time.Minute, "The restarted manager's sync period in the steady window, so that the window includes a resync of every App; the convergence phases run the manager's default.")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "Longest wait for every App, or every baseline Deployment, to be Available.")
	flag.StringVar(&o.out, "out", "bench.json", "Where to write the figures as JSON.")
	flag.Func("manager-arg", "An argument added to the manager's, such as --max-concurrent-reconciles=4 (repeatable), to measure another configuration than the bundle's.", func(v string) error {
		o.managerArgs = append(o.managerArgs, v)
		return nil
	})
	flag.Func("manager-env", "A variable set in the manager's environment, such as GOGC=50 (repeatable), to measure another configuration than the bundle's.", func(v string) error {
		o.managerEnv = append(o.managerEnv, v)
		return nil
	})
	flag.BoolVar(&o.heapOnly, "heap-only", false, "Measure only convergence and the heap, without the baseline and the steady window (for large APPS).")
	flag.StringVar(&o.convergePlot, "converge-plot", "", "Draw the median round's converge curves of the operator and the baseline as SVG to this file.")
	heapPlot := flag.String("heap-plot", "", "Draw the heap per App against the number of Apps as SVG to this file, from the JSON results named as arguments.")
	flag.Parse()
	if flag.NArg() > 0 {
		// Measure nothing: draw from earlier results.
		if err := plot(o.convergePlot, *heapPlot, flag.Args()); err != nil {
			fail(err)
		}
		return
	}
	if err := o.validate(); err != nil {
		fail(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))

	// The repository's root, wherever the benchmark runs from (make bench runs it in test/).
	root := localcluster.RepoRoot()
	o.root, o.bin = root, filepath.Join(root, "bin")
	ctx := context.Background()
	r, err := run(ctx, o)
	localcluster.CloseReleases()
	if err != nil {
		fail(err)
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(o.out, append(raw, '\n'), 0o644); err != nil {
		fail(err)
	}
	if o.convergePlot != "" && !o.heapOnly {
		if err := os.WriteFile(o.convergePlot, convergeChart(r).svg(), 0o644); err != nil {
			fail(err)
		}
	}
	if o.heapOnly {
		fmt.Printf("BENCH-HEAP apps=%d converge_s=%.2f heap_kib_per_app=%.2f heap_base_mib=%.1f heap_kib_per_app_above_base=%.2f live_kib_per_app=%.2f heap_kib_per_app_restarted=%.2f live_kib_per_app_restarted=%.2f restarted_manager_cpu_s=%.1f restarted_gc_cycles=%.0f\n",
			r.Apps, r.ConvergeSeconds, r.HeapKiBPerApp, r.HeapBaseBytes/1024/1024, r.HeapKiBMarginal, r.kibPerApp(r.HeapLiveBytes),
			r.HeapKiBPerAppRestarted, r.kibPerApp(r.HeapLiveRestartedBytes), r.RestartedCPUSeconds, r.RestartedGCCycles)
		return
	}
	for i, round := range r.Rounds {
		step("round %d: baseline %.2fs, operator %.2fs, ratio %.2f; CPU seconds %.1f -> %.1f",
			i+1, round.BaselineSeconds, round.ConvergeSeconds, round.Ratio, total(round.BaselineCPU), total(round.ConvergeCPU))
	}
	step("heap per App after convergence %.2f KiB in use, %.2f KiB live; restarted %.2f KiB in use, %.2f KiB live, after %.1f CPU seconds and %.0f collections",
		r.HeapKiBPerApp, r.kibPerApp(r.HeapLiveBytes), r.HeapKiBPerAppRestarted, r.kibPerApp(r.HeapLiveRestartedBytes), r.RestartedCPUSeconds, r.RestartedGCCycles)
	step("median round, CPU seconds until Available, baseline -> operator: %s",
		cpuComparison(components, r.BaselineCPU, r.ConvergeCPU))
	step("median round, the API server's CPU seconds by activity, baseline -> operator: %s; profiles: %s-{baseline,operator}.pb.gz",
		cpuComparison(activityNames(), r.BaselineAPIServerCPU, r.ConvergeAPIServerCPU), profilePrefix(o))
	fmt.Println(r.line())
}

// plot draws, from the JSON results in files, the converge curves of the first to
// convergeOut and the heap per App of them all to heapOut; an empty name draws nothing.
func plot(convergeOut, heapOut string, files []string) error {
	var results []Result
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		results = append(results, r)
	}
	if convergeOut != "" {
		if err := os.WriteFile(convergeOut, convergeChart(results[0]).svg(), 0o644); err != nil {
			return err
		}
	}
	if heapOut != "" {
		return os.WriteFile(heapOut, heapChart(results).svg(), 0o644)
	}
	return nil
}

func cpuComparison(names []string, baseline, operator map[string]float64) string {
	parts := make([]string, 0, len(names))
	for _, c := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f -> %.1f", c, baseline[c], operator[c]))
	}
	return strings.Join(parts, ", ")
}

func total(cpu map[string]float64) float64 {
	sum := 0.0
	for _, s := range cpu {
		sum += s
	}
	return sum
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func step(format string, args ...any) {
	fmt.Printf("%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
