package localcluster

import (
	"context"
	"errors"
	"fmt"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
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

// InstallOLM installs OLM the way its release manifest does (deploy/upstream/quickstart/olm.yaml
// of the pinned module): its CRDs, the olm and operators namespaces, and the olm and catalog
// operators as Deployments on the real node, with the local cluster's images. Left out are the
// public OperatorHub catalog, which cannot be reached, and packageserver, OLM's optional API for
// PackageManifests that nothing here reads. The catalog operator is given the opm image for its
// bundle unpack Jobs. The operators' namespace enforces the restricted Pod Security Standard.
func (c *Cluster) InstallOLM(ctx context.Context, repoRoot string) error {
	module, err := olmModuleDir(repoRoot)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(module, "deploy", "chart", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no OLM CRDs in %s: %w", module, err)
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
	// Left out: the public catalog's CatalogSource and packageserver's ClusterServiceVersion.
	if err := c.createFromManifest(ctx, filepath.Join(module, "deploy", "upstream", "quickstart", "olm.yaml"), useLocalOLMImage,
		"", "CatalogSource", "ClusterServiceVersion"); err != nil {
		return err
	}
	ns := &corev1.Namespace{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: OperatorsNamespace}, ns); err != nil {
		return err
	}
	patch := client.MergeFrom(ns.DeepCopy())
	ns.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}
	if err := c.Client.Patch(ctx, ns, patch); err != nil {
		return err
	}
	// Copies of an AllNamespaces CSV in every namespace are of no use here.
	cfg := &operatorsv1.OLMConfig{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: operatorsv1.OLMConfigSpec{Features: &operatorsv1.Features{DisableCopiedCSVs: ptrTo(true)}}}
	if err := c.Client.Create(ctx, cfg); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, name := range []string{"olm-operator", "catalog-operator"} {
		if err := c.WaitForDeployment(ctx, client.ObjectKey{Namespace: OLMNamespace, Name: name}, 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// useLocalOLMImage points a Deployment of OLM's manifest at the local cluster's OLM image, as
// its operators and as the catalog operator's util image, and gives the catalog operator the
// opm image.
func useLocalOLMImage(d *unstructured.Unstructured, ctr map[string]any) {
	ctr["image"] = OLMImage
	if d.GetName() == "catalog-operator" {
		var args []any
		for _, a := range ctr["args"].([]any) {
			s := strings.TrimSpace(fmt.Sprint(a))
			switch {
			case strings.HasPrefix(s, "quay.io/operator-framework/olm"):
				s = OLMImage // the value of --util-image
			case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && len(s) > 2:
				// The manifest spells flags with one dash, as the catalog command did before it
				// moved to cobra, which reads -namespace as -n amespace.
				s = "-" + s
			}
			args = append(args, s)
		}
		ctr["args"] = append(args, "--opmImage="+OPMImage)
	}
}

// olmModuleDir finds the module the olm and catalog commands were built from.
func olmModuleDir(repoRoot string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/operator-framework/operator-lifecycle-manager")
	cmd.Dir = filepath.Join(repoRoot, "hack", "tools", "olm")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the OLM module (run make tools): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
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

// ServeCatalogImage points the project's CatalogSource at a catalog image, for which OLM runs
// its registry pod on the real node, and waits until OLM reaches it. Serving another image
// replaces the pod, as a catalog update does; OLM resolves subscriptions anew.
func (c *Cluster) ServeCatalogImage(ctx context.Context, image string) error {
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: CatalogSourceName, Namespace: OLMNamespace}}
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err == nil {
		patch := client.MergeFrom(cs.DeepCopy())
		cs.Spec.Image = image
		if err := c.Client.Patch(ctx, cs, patch); err != nil {
			return err
		}
	} else {
		cs.Spec = operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Image: image, DisplayName: "App Operator",
			Publisher: "MyCompany"}
		if err := c.Client.Create(ctx, cs); err != nil {
			return err
		}
	}
	var pod string
	err := c.Poll(ctx, 3*time.Minute, "OLM's registry pod of "+image+" to serve", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err
		}
		pods := &corev1.PodList{}
		if err := c.Client.List(ctx, pods, client.InNamespace(OLMNamespace), client.MatchingLabels{"olm.catalogSource": CatalogSourceName}); err != nil {
			return false, err
		}
		ready := false
		for _, p := range pods.Items {
			if len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == image && p.DeletionTimestamp == nil {
				pod, ready = p.Name, podReady(&p)
			}
		}
		st := cs.Status.GRPCConnectionState
		return ready && st != nil && st.LastObservedState == "READY" && cs.Status.RegistryServiceStatus != nil, nil
	})
	if err != nil {
		return fmt.Errorf("%w (registry pod %q: %s)", err, pod, c.podTroubleByLabel(ctx, OLMNamespace, map[string]string{"olm.catalogSource": CatalogSourceName}))
	}
	return nil
}

// WaitForCRD waits until the App CRD is as OLM leaves it: no InstallPlan is still installing,
// the CRD has stayed unchanged for three seconds, and its conversion webhook, if it has one
// (every release before 1.0.0), points at the Service OLM made for the operator, with its CA.
// An InstallPlan that is installing applies the bundle's CRD, without the webhook's CA, again
// at each of its syncs whose status write conflicted; OLM injects the CA again only after it
// was removed.
func (c *Cluster) WaitForCRD(ctx context.Context) error {
	var rv string
	var since time.Time
	return c.Poll(ctx, 2*time.Minute, "OLM to settle the App CRD (and inject its conversion webhook's CA, if it has one)", func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: "apps.mycompany.com"}, crd); err != nil {
			return false, err
		}
		conv := crd.Spec.Conversion
		injected := conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter ||
			(conv.Webhook != nil && conv.Webhook.ClientConfig != nil && len(conv.Webhook.ClientConfig.CABundle) > 0 &&
				conv.Webhook.ClientConfig.Service != nil && conv.Webhook.ClientConfig.Service.Namespace == OperatorsNamespace)
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

// WaitForWebhooks waits until every webhook of the App API answers from the serving
// certificate its configuration trusts: a server-side dry run of an App's creation, through
// v1 (defaulting and validation) and, while the CRD serves it, through v1alpha1 (conversion
// too), passes three times in a row. OLM injects a new CA into each webhook configuration on
// its own schedule, so a release's manager can be ready while the API server still trusts the
// previous CA. The dry runs are in the default namespace, which an install for all namespaces
// serves.
func (c *Cluster) WaitForWebhooks(ctx context.Context) error {
	return c.WaitForWebhooksIn(ctx, metav1.NamespaceDefault)
}

// WaitForWebhooksIn is WaitForWebhooks in a namespace an install serves.
func (c *Cluster) WaitForWebhooksIn(ctx context.Context, namespace string) error {
	passes := 0
	return c.PollEvery(ctx, time.Second, 2*time.Minute, "the App API's webhooks to answer in "+namespace, func(ctx context.Context) (bool, error) {
		if err := c.dryRunApps(ctx, namespace); err != nil {
			passes = 0
			return false, err // polled again, and reported if it lasts
		}
		passes++
		return passes == 3, nil
	})
}

// dryRunApps creates an App through v1 and, while the CRD serves it, through v1alpha1, in a
// server-side dry run.
func (c *Cluster) dryRunApps(ctx context.Context, namespace string) error {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: "webhook-check"}
	apps := []client.Object{&appv1.App{ObjectMeta: meta, Spec: appv1.AppSpec{Image: "registry.example.com/check/web:1.0"}}}
	legacy, err := c.Serves(ctx, Legacy.Version)
	if err != nil {
		return err
	}
	if legacy {
		apps = append(apps, LegacyApp(meta, "registry.example.com/check/web:1.0", 0))
	}
	for _, app := range apps {
		if err := c.Client.Create(ctx, app, client.DryRunAll); err != nil {
			return err
		}
	}
	return nil
}

// Serves reports whether the App CRD serves a version.
func (c *Cluster) Serves(ctx context.Context, version string) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: "apps." + appv1.GroupVersion.Group}, crd); err != nil {
		return false, err
	}
	return slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == version && v.Served
	}), nil
}

// installing reports whether an InstallPlan in the operators' namespace is installing.
func (c *Cluster) installing(ctx context.Context) (bool, error) {
	plans, err := c.installPlans(ctx)
	return slices.ContainsFunc(plans, func(p operatorsv1alpha1.InstallPlan) bool {
		return p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseInstalling
	}), err
}

// installPlans lists the InstallPlans in the operators' namespace.
func (c *Cluster) installPlans(ctx context.Context) ([]operatorsv1alpha1.InstallPlan, error) {
	plans := &operatorsv1alpha1.InstallPlanList{}
	if err := c.Client.List(ctx, plans, client.InNamespace(OperatorsNamespace)); err != nil {
		return nil, err
	}
	return plans.Items, nil
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

// StartWithOLM starts a cluster (see StartCluster) and installs OLM.
func StartWithOLM(ctx context.Context, o Options, repoRoot string) (*Cluster, error) {
	c, err := StartCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := c.InstallOLM(ctx, repoRoot); err != nil {
		return nil, errors.Join(fmt.Errorf("installing OLM: %w", err), c.Stop())
	}
	return c, nil
}
