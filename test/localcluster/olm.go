package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespaces and names the harness gives OLM's objects.
const (
	OLMNamespace       = "olm"
	OperatorsNamespace = "operators"
	CatalogSourceName  = "app-operator-catalog"
	SubscriptionName   = "app-operator"
	PackageName        = "app-operator"
	Channel            = "stable"
)

// InstallOLM applies OLM's CRDs and runs the olm and catalog operators, with one
// OperatorGroup for all namespaces in OperatorsNamespace.
func (c *Cluster) InstallOLM(ctx context.Context, repoRoot string) error {
	crdDir, err := olmCRDDir(repoRoot)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no OLM CRDs in %s: %v", crdDir, err)
	}
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeFile(f, crd); err != nil {
			return err
		}
		// Created, not applied: the ClusterServiceVersion CRD is too large for client-side apply.
		if err := c.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		if err := c.waitEstablished(ctx, crd.Name); err != nil {
			return err
		}
	}
	for _, ns := range []string{OLMNamespace, OperatorsNamespace} {
		if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	// Copies of an AllNamespaces CSV in every namespace are of no use here.
	cfg := &operatorsv1.OLMConfig{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: operatorsv1.OLMConfigSpec{Features: &operatorsv1.Features{DisableCopiedCSVs: ptrTo(true)}}}
	if err := c.Client.Create(ctx, cfg); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: "global-operators", Namespace: OperatorsNamespace}}
	if err := c.Client.Create(ctx, og); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := c.Start("olm", filepath.Join(c.Bin, "olm"), []string{"--namespace", OLMNamespace, "--writeStatusName", ""}, nil); err != nil {
		return err
	}
	// The images are never used: catalogs are served by address and bundles are inline.
	_, err = c.Start("catalog", filepath.Join(c.Bin, "catalog"), []string{"--namespace", OLMNamespace,
		"--configmapServerImage=unused.invalid/configmap-server", "--opmImage=unused.invalid/opm",
		"--util-image=unused.invalid/util", "--set-workload-user-id=false"}, nil)
	return err
}

// olmCRDDir finds OLM's CRDs in the module the olm and catalog commands were built from.
func olmCRDDir(repoRoot string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/operator-framework/operator-lifecycle-manager")
	cmd.Dir = filepath.Join(repoRoot, "hack", "tools", "olm")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the OLM module (run make tools): %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "deploy", "chart", "crds"), nil
}

func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	return c.Poll(ctx, time.Minute, "CRD "+name+" to be established", func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// ServeCatalog serves a file-based catalog directory with opm and points a CatalogSource at
// it. Serving again replaces the catalog; OLM resolves subscriptions anew.
func (c *Cluster) ServeCatalog(ctx context.Context, dir string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	if _, err := c.Start("opm-"+fmt.Sprint(ports[0]), filepath.Join(c.Bin, "opm"), []string{"serve", dir, "-p", fmt.Sprint(ports[0]), "--pprof-addr", "127.0.0.1:0"}, nil); err != nil {
		return err
	}
	if err := c.Poll(ctx, time.Minute, "opm to serve "+dir, func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil, nil
	}); err != nil {
		return err
	}
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: CatalogSourceName, Namespace: OLMNamespace}}
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err == nil {
		cs.Spec.Address = addr
		if err := c.Client.Update(ctx, cs); err != nil {
			return err
		}
	} else {
		cs.Spec = operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: addr, DisplayName: "App Operator"}
		if err := c.Client.Create(ctx, cs); err != nil {
			return err
		}
	}
	return c.Poll(ctx, 2*time.Minute, "CatalogSource "+CatalogSourceName+" to connect to "+addr, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err
		}
		st := cs.Status.GRPCConnectionState
		return st != nil && st.Address == addr && st.LastObservedState == "READY", nil
	})
}

// WaitForConversionWebhook waits until OLM has pointed the App CRD's conversion webhook at
// the Service it made for the operator, with its CA, no InstallPlan is still installing, and
// the CRD has stayed so for three seconds. An InstallPlan that is installing applies the
// bundle's CRD, without the webhook's CA, again at each of its syncs whose status write
// conflicted; OLM injects the CA again only after it was removed.
func (c *Cluster) WaitForConversionWebhook(ctx context.Context) error {
	var rv string
	var since time.Time
	return c.Poll(ctx, 2*time.Minute, "OLM to inject the CA of the App CRD's conversion webhook for good", func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd); err != nil {
			return false, err
		}
		conv := crd.Spec.Conversion
		injected := conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil && len(conv.Webhook.ClientConfig.CABundle) > 0 &&
			conv.Webhook.ClientConfig.Service != nil && conv.Webhook.ClientConfig.Service.Namespace == OperatorsNamespace
		installing, err := c.installing(ctx)
		if err != nil {
			return false, err
		}
		if !injected || installing || crd.ResourceVersion != rv {
			rv, since = crd.ResourceVersion, time.Now()
			return false, nil
		}
		return time.Since(since) >= 3*time.Second, nil
	})
}

// installing reports whether an InstallPlan in the operators' namespace is installing.
func (c *Cluster) installing(ctx context.Context) (bool, error) {
	return c.anyInstallPlan(ctx, func(p operatorsv1alpha1.InstallPlan) bool {
		return p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseInstalling
	})
}

// anyInstallPlan reports whether an InstallPlan in the operators' namespace matches.
func (c *Cluster) anyInstallPlan(ctx context.Context, match func(operatorsv1alpha1.InstallPlan) bool) (bool, error) {
	plans := &operatorsv1alpha1.InstallPlanList{}
	if err := c.Client.List(ctx, plans, client.InNamespace(OperatorsNamespace)); err != nil {
		return false, err
	}
	return slices.ContainsFunc(plans.Items, match), nil
}

func decodeFile(path string, into any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(into)
}

func ptrTo[T any](v T) *T { return &v }

// StartWithOLM starts a cluster (see StartCluster), serves its webhook egress from this
// process and installs OLM.
func StartWithOLM(ctx context.Context, o Options, repoRoot string) (*Cluster, error) {
	c, err := StartCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := c.ServeEgress(); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	if err := c.InstallOLM(ctx, repoRoot); err != nil {
		return nil, errors.Join(fmt.Errorf("installing OLM: %w", err), c.Stop())
	}
	return c, nil
}
