package main

import (
	"context"
	"slices"
	"time"

	"github.com/google/pprof/profile"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// comparison is what one comparison of the two phases measured.
type comparison struct {
	BaselineSeconds float64 `json:"baseline_s"`
	ConvergeSeconds float64 `json:"converge_s"`
	Ratio           float64 `json:"ratio"`
	// CPU seconds each component of the cluster used from the first creation until every
	// object was Available, for the baseline and for the operator.
	BaselineCPU map[string]float64 `json:"baseline_cpu_s"`
	ConvergeCPU map[string]float64 `json:"converge_cpu_s"`
	// The API server's share of those, by activity (see activities).
	BaselineAPIServerCPU map[string]float64 `json:"baseline_apiserver_cpu_s_by_activity"`
	ConvergeAPIServerCPU map[string]float64 `json:"converge_apiserver_cpu_s_by_activity"`
	// How many objects were Available over time, from the first creation: each change.
	BaselineCurve []Point `json:"baseline_curve,omitempty"`
	ConvergeCurve []Point `json:"converge_curve,omitempty"`
}

// Point is a count of Available objects at a time since the first creation.
type Point struct {
	Seconds   float64 `json:"s"`
	Available int     `json:"available"`
}

// Round is one comparison of the two phases. The machine's speed drifts from minute to
// minute, so one comparison can be off by a third either way; the benchmark repeats it,
// alternating which phase goes first, and reports the round with the median ratio.
type Round struct {
	OperatorFirst bool `json:"operator_first"`
	comparison
	// Where the API server's CPU went in each phase.
	baselineProfile, convergeProfile *profile.Profile
}

func newRound(base, converge phase, operatorFirst bool) Round {
	return Round{OperatorFirst: operatorFirst, baselineProfile: base.apiServer, convergeProfile: converge.apiServer, comparison: comparison{
		BaselineSeconds: base.took.Seconds(),
		ConvergeSeconds: converge.took.Seconds(),
		Ratio:           converge.took.Seconds() / base.took.Seconds(),
		BaselineCPU:     base.cpu,
		ConvergeCPU:     converge.cpu,

		BaselineAPIServerCPU: base.apiServerCPU,
		ConvergeAPIServerCPU: converge.apiServerCPU,
		BaselineCurve:        base.curve,
		ConvergeCurve:        converge.curve,
	}}
}

// moreRounds runs rounds 2..n after the first, full, measurement, each phase on a cluster
// holding no Apps and no baseline: it deletes the first round's Apps, then, in each round,
// runs both phases, the operator's first in even rounds, and deletes each phase's objects
// before the next phase.
func moreRounds(ctx context.Context, c *localcluster.Cluster, o options, n int) ([]Round, error) {
	if n < 2 {
		return nil, nil
	}
	step("deleting the Apps of round 1")
	if err := deleteNamespace(ctx, c, appsNamespace); err != nil {
		return nil, err
	}
	var rounds []Round
	for i := 2; i <= n; i++ {
		operatorFirst := i%2 == 0
		var base, converge phase
		var err error
		for _, operator := range []bool{operatorFirst, !operatorFirst} {
			if operator {
				step("round %d of %d: operator", i, n)
				if converge, err = convergeApps(ctx, c, o); err == nil {
					err = deleteNamespace(ctx, c, appsNamespace)
				}
			} else {
				step("round %d of %d: baseline", i, n)
				base, _, _, err = baseline(ctx, c, o)
			}
			if err != nil {
				return rounds, err
			}
		}
		rounds = append(rounds, newRound(base, converge, operatorFirst))
	}
	return rounds, nil
}

// writeProfiles writes the API server's CPU profiles of the round's two phases, as
// prefix-baseline.pb.gz and prefix-operator.pb.gz.
func (r Round) writeProfiles(prefix string) error {
	if err := writeProfile(r.baselineProfile, prefix+"-baseline.pb.gz"); err != nil {
		return err
	}
	return writeProfile(r.convergeProfile, prefix+"-operator.pb.gz")
}

// median returns the round with the median ratio: the lower of the middle two for an even
// count.
func median(rounds []Round) Round {
	sorted := slices.Clone(rounds)
	slices.SortFunc(sorted, func(a, b Round) int {
		switch {
		case a.Ratio < b.Ratio:
			return -1
		case a.Ratio > b.Ratio:
			return 1
		}
		return 0
	})
	return sorted[(len(sorted)-1)/2]
}

// deleteNamespace deletes a namespace and waits until it and everything in it are gone.
func deleteNamespace(ctx context.Context, c *localcluster.Cluster, ns string) error {
	if err := c.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return c.PollEvery(ctx, time.Second, 30*time.Minute, "namespace "+ns+" to be gone", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	})
}
