package framework

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
	"k8s.io/apimachinery/pkg/util/wait"
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

// Subscription describes how to subscribe to App Operator.
type Subscription struct {
	// StartingCSV installs this release instead of the channel's head.
	StartingCSV string
	// Manual makes every InstallPlan wait for approval.
	Manual bool
}

// Subscribe subscribes to App Operator's stable channel in OperatorsNamespace. The first
// Subscription is named SubscriptionName; one made again after Uninstall gets a new name
// (app-operator-2, ...): OLM's resolver may still hold the deleted Subscription and copy its
// status onto a new one of the same name, which then waits for an InstallPlan that is gone.
func (c *Cluster) Subscribe(ctx context.Context, s Subscription) error {
	approval := operatorsv1alpha1.ApprovalAutomatic
	if s.Manual {
		approval = operatorsv1alpha1.ApprovalManual
	}
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: subscriptionName(c.subscriptions + 1), Namespace: OperatorsNamespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: CatalogSourceName, CatalogSourceNamespace: OLMNamespace,
			Package: PackageName, Channel: Channel, StartingCSV: s.StartingCSV, InstallPlanApproval: approval,
		},
	}
	if err := c.Client.Create(ctx, sub); err != nil {
		return err
	}
	c.subscriptions++
	return nil
}

// subscriptionKey is the key of the Subscription made last.
func (c *Cluster) subscriptionKey() client.ObjectKey {
	return client.ObjectKey{Namespace: OperatorsNamespace, Name: subscriptionName(c.subscriptions)}
}

// subscriptionName names the nth Subscription.
func subscriptionName(n int) string {
	if n <= 1 {
		return SubscriptionName
	}
	return fmt.Sprintf("%s-%d", SubscriptionName, n)
}

// WaitForCSV waits until a ClusterServiceVersion reaches the Succeeded phase, and says what
// it and the Subscription last showed if it does not.
func (c *Cluster) WaitForCSV(ctx context.Context, name string, timeout time.Duration) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	err := c.Poll(ctx, timeout, "ClusterServiceVersion "+name+" to succeed", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: name}, csv); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w (phase %q, reason %q: %s; %s)", err, csv.Status.Phase, csv.Status.Reason, csv.Status.Message, c.describeSubscription(ctx))
	}
	return csv, nil
}

// InstallPlanFor returns the InstallPlan that installs a ClusterServiceVersion, once OLM has
// made it. It is the plan the Subscription's status refers to: plans of an earlier
// Subscription may still be there until the garbage collector removes them.
func (c *Cluster) InstallPlanFor(ctx context.Context, csv string, timeout time.Duration) (*operatorsv1alpha1.InstallPlan, error) {
	var plan *operatorsv1alpha1.InstallPlan
	err := c.Poll(ctx, timeout, "OLM to plan the install of "+csv, func(ctx context.Context) (bool, error) {
		var err error
		plan, err = c.currentPlan(ctx)
		return plan != nil && slices.Contains(plan.Spec.ClusterServiceVersionNames, csv), err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, c.describeSubscription(ctx))
	}
	return plan, nil
}

// currentPlan returns the InstallPlan the Subscription's status refers to, or nil while there
// is none.
func (c *Cluster) currentPlan(ctx context.Context) (*operatorsv1alpha1.InstallPlan, error) {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Client.Get(ctx, c.subscriptionKey(), sub); err != nil {
		return nil, err
	}
	ref := sub.Status.InstallPlanRef
	if ref == nil {
		return nil, nil
	}
	plan := &operatorsv1alpha1.InstallPlan{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// describeSubscription says what the Subscription and its InstallPlan last showed, for errors.
func (c *Cluster) describeSubscription(ctx context.Context) string {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Client.Get(ctx, c.subscriptionKey(), sub); err != nil {
		return fmt.Sprintf("Subscription: %v", err)
	}
	s := fmt.Sprintf("Subscription state %q, current %q, installed %q", sub.Status.State, sub.Status.CurrentCSV, sub.Status.InstalledCSV)
	for _, cond := range sub.Status.Conditions {
		if cond.Status == corev1.ConditionTrue {
			s += fmt.Sprintf(", %s: %s", cond.Type, cond.Message)
		}
	}
	plan, err := c.currentPlan(ctx)
	switch {
	case err != nil:
		s += fmt.Sprintf("; InstallPlan: %v", err)
	case plan != nil:
		s += fmt.Sprintf("; InstallPlan %s of %v: approved %t, phase %q", plan.Name, plan.Spec.ClusterServiceVersionNames, plan.Spec.Approved, plan.Status.Phase)
		for _, cond := range plan.Status.Conditions {
			if cond.Message != "" {
				s += ", " + cond.Message
			}
		}
	}
	return s
}

// Approve approves the InstallPlan of a ClusterServiceVersion, as a user does under manual
// approval: once OLM shows it waiting for approval, and again until OLM has taken it up. A
// plan that fails is an error.
func (c *Cluster) Approve(ctx context.Context, csv string) error {
	plan, err := c.InstallPlanFor(ctx, csv, 3*time.Minute)
	if err != nil {
		return err
	}
	return c.Poll(ctx, 3*time.Minute, "OLM to take up the approved InstallPlan of "+csv, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
			return false, err
		}
		switch phase := plan.Status.Phase; {
		case phase == operatorsv1alpha1.InstallPlanPhaseRequiresApproval && !plan.Spec.Approved:
			patch := client.MergeFrom(plan.DeepCopy())
			plan.Spec.Approved = true
			return false, c.Client.Patch(ctx, plan, patch)
		case phase == operatorsv1alpha1.InstallPlanPhaseFailed:
			return false, stopPolling{fmt.Errorf("InstallPlan %s failed (%s)", plan.Name, c.describeSubscription(ctx))}
		case plan.Spec.Approved && phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval && phase != "":
			return true, nil
		}
		return false, nil
	})
}

// WaitForInstallPlan waits until the Subscription's InstallPlan for a ClusterServiceVersion
// has completed every step.
func (c *Cluster) WaitForInstallPlan(ctx context.Context, csv string, timeout time.Duration) error {
	plan, err := c.InstallPlanFor(ctx, csv, timeout)
	if err != nil {
		return err
	}
	err = c.Poll(ctx, timeout, "the InstallPlan of "+csv+" to complete", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
			return false, err
		}
		return plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%s)", err, c.describeSubscription(ctx))
	}
	return nil
}

// WaitForConversionWebhook waits until OLM has pointed the App CRD's conversion webhook at
// the Service it made for the operator, with its CA, and the CRD has stayed so for three
// seconds: while an InstallPlan still applies the bundle's CRD, OLM injects its settings
// again only after the CRD was replaced.
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
		if !injected || crd.ResourceVersion != rv {
			rv, since = crd.ResourceVersion, time.Now()
			return false, nil
		}
		return time.Since(since) >= 3*time.Second, nil
	})
}

// Uninstall deletes the Subscription and the installed ClusterServiceVersion, as a user
// uninstalling the operator does, and waits until both are gone and the garbage collector has
// removed the Subscription's InstallPlans; CRDs and custom resources stay.
func (c *Cluster) Uninstall(ctx context.Context) error {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Client.Get(ctx, c.subscriptionKey(), sub); err != nil {
		return err
	}
	if err := c.Client.Delete(ctx, sub); err != nil {
		return err
	}
	if name := sub.Status.InstalledCSV; name != "" {
		csv := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorsNamespace, Name: name}}
		if err := c.Client.Delete(ctx, csv); client.IgnoreNotFound(err) != nil {
			return err
		}
		if err := c.Poll(ctx, time.Minute, "ClusterServiceVersion "+name+" to be deleted", func(ctx context.Context) (bool, error) {
			err := c.Client.Get(ctx, client.ObjectKeyFromObject(csv), csv)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
	}
	return c.Poll(ctx, time.Minute, "the InstallPlans of Subscription "+sub.Name+" to be collected", func(ctx context.Context) (bool, error) {
		plans := &operatorsv1alpha1.InstallPlanList{}
		if err := c.Client.List(ctx, plans, client.InNamespace(OperatorsNamespace)); err != nil {
			return false, err
		}
		return !slices.ContainsFunc(plans.Items, func(p operatorsv1alpha1.InstallPlan) bool {
			return slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == sub.UID })
		}), nil
	})
}

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
			return false, nil
		}
		return ok, nil
	})
	var stop stopPolling
	if errors.As(err, &stop) {
		return fmt.Errorf("waiting for %s: %w", what, stop.error)
	}
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting %v for %s: %w (last error: %v)", timeout, what, err, last)
		}
		return fmt.Errorf("waiting %v for %s: %w", timeout, what, err)
	}
	return nil
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
