package upgrade

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// probeNamespace holds the Apps a probe writes and reads, apart from the fleet.
const probeNamespace = "probe"

// probe runs a client writing and reading Apps while do runs, and reports what it saw. It
// writes and reads through v1alpha1 too if both releases, from and to, serve it.
func (e *env) probe(t *testing.T, phase, from, to string, do func()) localcluster.ProbeFigures {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.IgnoreAlreadyExists(e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace}})))
	f, err := e.ProbeDuring(ctx, probeNamespace, servesV1alpha1(from) && servesV1alpha1(to), do)
	require.NoError(t, err)
	t.Log(f.Report(phase))
	require.Positive(t, f.Writes, "the probe wrote")
	return f
}
