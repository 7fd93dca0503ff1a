package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// TestTheBadInputCorpusIsRefused applies every invalid App of testdata/invalid-apps.json
// (v1, the served version), with kubectl and strict field validation, as a user would. Each
// is refused with a message naming its field, and nothing is left behind: no App, no
// Deployment, no Service.
func TestTheBadInputCorpusIsRefused(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "invalid-apps.json"))
	require.NoError(t, err)
	var corpus []struct{ Case, Manifest, Field string }
	require.NoError(t, json.Unmarshal(raw, &corpus))
	require.GreaterOrEqual(t, len(corpus), 40)

	ns := namespace(t)
	for _, c := range corpus {
		t.Run(c.Case, func(t *testing.T) {
			out, err := kubectlStdin(t, c.Manifest, "create", "--validate=strict", "-n", ns, "-f", "-")
			require.Error(t, err, "accepted: %s", out)
			require.Contains(t, out, c.Field, "the refusal names the field")
		})
	}
	ctx := context.Background()
	for _, list := range []client.ObjectList{&appv1.AppList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}} {
		require.NoError(t, cluster.Client.List(ctx, list, client.InNamespace(ns)))
		items, err := metaItems(list)
		require.NoError(t, err)
		require.Empty(t, items, "%T: nothing is left behind", list)
	}
}
