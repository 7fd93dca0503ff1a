// Package security checks App Operator's least privilege and safe defaults from its manifests:
// RBAC, network policies and the manager's pod security. The same properties are proven on a
// running cluster by test/e2e.
package security_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	appwebhook "github.com/mycompany/app-operator/internal/webhook"
)

const root = "../.."

// operatorRules are the only permissions the manager's ServiceAccount gets, each for a reason.
var operatorRules = map[string]string{
	// The children of Apps: read through the cache (get, list, watch), written with
	// server-side apply (patch, and create for a child that does not exist yet), and deleted
	// when an App no longer wants them or to recreate one changed beyond repair.
	"apps/deployments":                     "create,delete,get,list,patch,watch",
	"/services":                            "create,delete,get,list,patch,watch",
	"autoscaling/horizontalpodautoscalers": "create,delete,get,list,patch,watch",
	"policy/poddisruptionbudgets":          "create,delete,get,list,patch,watch",
	// The ReplicaSets of an App's Deployment, listed past the cache (never watched, never
	// written) only to roll back a failed rollout: the template to restore is in one of them.
	"apps/replicasets": "list",
	// Apps: read through the cache; only their status is written, by the reconciler.
	"mycompany.com/apps":        "get,list,watch",
	"mycompany.com/apps/status": "patch",
	// The App CRD only (resourceNames): the defaulting webhook validates a malformed App
	// against its schema, to name the field at fault.
	"apiextensions.k8s.io/customresourcedefinitions": "get",
	// Events about Apps (events.k8s.io) and about leader election (core).
	"events.k8s.io/events": "create,patch",
	"/events":              "create,patch",
	// Leader election.
	"coordination.k8s.io/leases": "create,get,update",
	// Authenticating and authorizing metrics scrapes; asking whether an App's requester may
	// do what the App would (the validating webhook).
	"authentication.k8s.io/tokenreviews":        "create",
	"authorization.k8s.io/subjectaccessreviews": "create",
	// In its own namespace only (a Role): the ServiceMonitor and PrometheusRule it applies
	// where the Prometheus Operator runs, owned by its ClusterServiceVersion.
	"monitoring.coreos.com/servicemonitors":       "create,get,patch",
	"monitoring.coreos.com/prometheusrules":       "create,get,patch",
	"operators.coreos.com/clusterserviceversions": "get",
	// The Secret OLM keeps the webhooks' certificate in, and no other (resourceNames): the
	// manager adds its ClusterServiceVersion to the Secret's owners, so that an upgrade keeps
	// the certificate. It cannot read a Secret, this one included.
	"/secrets": "patch",
}

// readRole reads the rules of every Role and ClusterRole in a file of config/rbac.
func readRole(t *testing.T, name string) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", name))
	require.NoError(t, err)
	var rules []rbacv1.PolicyRule
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var role rbacv1.ClusterRole // a Role has the same shape
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		rules = append(rules, role.Rules...)
	}
	return rules
}

func flatten(t *testing.T, rules []rbacv1.PolicyRule) map[string]string {
	t.Helper()
	verbs := map[string][]string{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				verbs[g+"/"+res] = append(verbs[g+"/"+res], r.Verbs...)
			}
		}
	}
	out := map[string]string{}
	for k, v := range verbs {
		sort.Strings(v)
		out[k] = strings.Join(slices.Compact(v), ",")
	}
	return out
}

func noWildcardNorSecretRead(t *testing.T, where string, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, r := range rules {
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
			for _, v := range list {
				require.NotContains(t, v, "*", "%s: wildcard in %+v", where, r)
			}
		}
		for _, res := range r.Resources {
			if strings.Split(res, "/")[0] == "secrets" {
				require.Equal(t, []string{"secrets"}, r.Resources, "%s: %+v", where, r)
				require.Equal(t, []string{"patch"}, r.Verbs, "%s: only the certificate's owners are patched: %+v", where, r)
				require.Equal(t, []string{appwebhook.CertificateSecret}, r.ResourceNames, "%s: only OLM's Secret of the webhooks' certificate: %+v", where, r)
			}
		}
	}
}

func TestConfigRBACIsLeastPrivilege(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "config", "rbac", "*role.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		noWildcardNorSecretRead(t, f, readRole(t, filepath.Base(f)))
	}

	var rules []rbacv1.PolicyRule
	for _, f := range []string{"role.yaml", "leader_election_role.yaml", "metrics_auth_role.yaml"} {
		rules = append(rules, readRole(t, f)...)
	}
	require.Equal(t, operatorRules, flatten(t, rules), "the manager's ServiceAccount gets exactly these verbs")
	for _, r := range rules {
		if r.APIGroups[0] == "apiextensions.k8s.io" {
			require.Equal(t, []string{"apps.mycompany.com"}, r.ResourceNames, "only the App CRD")
		}
	}
}

func TestCSVPermissionsAreTheConfigRBAC(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	spec := b.CSV.Spec.InstallStrategy.StrategySpec
	var rules []rbacv1.PolicyRule
	for _, p := range append(spec.ClusterPermissions, spec.Permissions...) {
		require.Equal(t, "app-operator-controller-manager", p.ServiceAccountName)
		noWildcardNorSecretRead(t, "CSV", p.Rules)
		rules = append(rules, p.Rules...)
	}
	require.Equal(t, operatorRules, flatten(t, rules))
}

// clusterRules are what the manager holds cluster-wide however OLM installs it: everything else
// is in the CSV's namespaced permissions, which OLM grants in the OperatorGroup's target
// namespaces only.
var clusterRules = map[string]string{
	"apiextensions.k8s.io/customresourcedefinitions": "get",
	"authentication.k8s.io/tokenreviews":             "create",
	"authorization.k8s.io/subjectaccessreviews":      "create",
}

func TestCSVClusterPermissionsAreOnlyClusterScoped(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	spec := b.CSV.Spec.InstallStrategy.StrategySpec
	var cluster, namespaced []rbacv1.PolicyRule
	for _, p := range spec.ClusterPermissions {
		cluster = append(cluster, p.Rules...)
	}
	for _, p := range spec.Permissions {
		namespaced = append(namespaced, p.Rules...)
	}
	require.Equal(t, clusterRules, flatten(t, cluster))
	for resource := range flatten(t, namespaced) {
		_, clusterScoped := clusterRules[resource]
		require.False(t, clusterScoped, "%s is cluster-scoped: a Role cannot grant it", resource)
	}
}
