package makefile_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mycompany/app-operator/test/chart"
	"github.com/mycompany/app-operator/test/localcluster"
)

// deployNamespace is where make deploy installs the manager.
const deployNamespace = "app-operator-system"

// TestMakeDeployForSomeNamespacesServesThoseOnly renders make deploy's manifests with and
// without WATCH_NAMESPACES. Scoped, the manager's controllers are told the namespaces, every
// webhook is limited to them, and the manager's ClusterRole is bound in each of them instead
// of cluster-wide: as the Helm chart serves them with watchNamespaces.
func TestMakeDeployForSomeNamespacesServesThoseOnly(t *testing.T) {
	root := localcluster.RepoRoot()
	hooks := []string{"mapp.mycompany.com", "vapp-scale.mycompany.com", "vapp.mycompany.com"}

	all := served(t, deployManifests(t, root))
	assert.Equal(t, map[string]string{"manager": "", "webhooks": ""}, all.WatchNamespaces)
	assert.Len(t, all.Selectors, len(hooks))
	for _, h := range hooks {
		assert.Nil(t, all.Selectors[h], "webhook %s serves every namespace", h)
	}
	assert.Equal(t, []string{"*"}, all.RulesBoundIn)

	scoped := served(t, deployManifests(t, root, "WATCH_NAMESPACES=team-a,123"))
	assert.Equal(t, map[string]string{"manager": "team-a,123", "webhooks": ""}, scoped.WatchNamespaces,
		"the controllers are told; the webhooks are limited by their configurations")
	only := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"team-a", "123"},
	}}}
	assert.Len(t, scoped.Selectors, len(hooks))
	for _, h := range hooks {
		assert.Equal(t, only, scoped.Selectors[h], "webhook %s", h)
	}
	assert.Equal(t, []string{"123", "team-a"}, scoped.RulesBoundIn)

	for list, want := range map[string]localcluster.Served{"": all, "team-a,123": scoped} {
		values := map[string]any{}
		if list != "" {
			values["watchNamespaces"] = []any{"team-a", "123"}
		}
		objs, _, err := chart.Render(values, deployNamespace)
		require.NoError(t, err)
		assert.Equal(t, want, served(t, objs), "the chart serves what make deploy serves, for %q", list)
	}
}

// TestMakeDeployRefusesABadNamespaceListNamingIt wants make deploy-manifests to refuse a list
// that is not of distinct namespace names, naming WATCH_NAMESPACES and the item, and to print
// nothing that kubectl could apply.
func TestMakeDeployRefusesABadNamespaceListNamingIt(t *testing.T) {
	root := localcluster.RepoRoot()
	for list, want := range map[string]string{
		"team-a,Team_B":  `WATCH_NAMESPACES: "Team_B" is not a namespace name`,
		"team-a,,team-b": `WATCH_NAMESPACES: "" is not a namespace name`,
		"team-a, team-b": `WATCH_NAMESPACES: " team-b" is not a namespace name`,
		"team-a,team-a":  "WATCH_NAMESPACES: team-a is listed twice",
	} {
		cmd := exec.Command("make", "--no-print-directory", "-s", "-o", "manifests", "deploy-manifests", "WATCH_NAMESPACES="+list)
		cmd.Dir = root
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.Error(t, cmd.Run(), list)
		assert.Contains(t, stderr.String(), want, list)
		assert.Empty(t, stdout.String(), "%s: nothing to apply", list)
	}
}

func served(t *testing.T, objs []*unstructured.Unstructured) localcluster.Served {
	t.Helper()
	s, err := localcluster.ServedBy(objs, deployNamespace)
	require.NoError(t, err)
	return s
}
