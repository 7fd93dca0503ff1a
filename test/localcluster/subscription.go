package localcluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	if err := c.Client.Create(ctx, NewSubscription(OperatorsNamespace, subscriptionName(c.subscriptions+1), s)); err != nil {
		return err
	}
	c.subscriptions++
	return nil
}

// NewSubscription is a Subscription to App Operator's stable channel in the local catalog.
func NewSubscription(namespace, name string, s Subscription) *operatorsv1alpha1.Subscription {
	approval := operatorsv1alpha1.ApprovalAutomatic
	if s.Manual {
		approval = operatorsv1alpha1.ApprovalManual
	}
	return &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: CatalogSourceName, CatalogSourceNamespace: OLMNamespace,
			Package: PackageName, Channel: Channel, StartingCSV: s.StartingCSV, InstallPlanApproval: approval,
		},
	}
}

// subscriptionKey is the key of the Subscription made last.
func (c *Cluster) subscriptionKey() client.ObjectKey {
	return client.ObjectKey{Namespace: OperatorsNamespace, Name: subscriptionName(c.subscriptions)}
}

// CurrentSubscription reads the Subscription made last.
func (c *Cluster) CurrentSubscription(ctx context.Context) (*operatorsv1alpha1.Subscription, error) {
	sub := &operatorsv1alpha1.Subscription{}
	return sub, c.Client.Get(ctx, c.subscriptionKey(), sub)
}

// subscriptionName names the nth Subscription.
func subscriptionName(n int) string {
	if n <= 1 {
		return SubscriptionName
	}
	return fmt.Sprintf("%s-%d", SubscriptionName, n)
}

// WaitForCSV waits until a ClusterServiceVersion in OperatorsNamespace reaches the Succeeded
// phase, and says what it and the Subscription last showed if it does not.
func (c *Cluster) WaitForCSV(ctx context.Context, name string, timeout time.Duration) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv, err := c.WaitForCSVIn(ctx, OperatorsNamespace, name, operatorsv1alpha1.CSVPhaseSucceeded, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, c.describeSubscription(ctx, c.subscriptionKey()))
	}
	return csv, nil
}

// WaitForCSVIn waits until a ClusterServiceVersion in a namespace reaches a phase, and says
// what it last showed if it does not.
func (c *Cluster) WaitForCSVIn(ctx context.Context, namespace, name string, phase operatorsv1alpha1.ClusterServiceVersionPhase, timeout time.Duration) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	err := c.Poll(ctx, timeout, fmt.Sprintf("ClusterServiceVersion %s/%s to reach %s", namespace, name, phase), func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, csv); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return csv.Status.Phase == phase, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w (phase %q, reason %q: %s)", err, csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
	}
	return csv, nil
}

// InstallPlanFor returns the InstallPlan that installs a ClusterServiceVersion, once OLM has
// made it. It is the plan the status of the Subscription made last refers to: plans of an
// earlier Subscription may still be there until the garbage collector removes them.
func (c *Cluster) InstallPlanFor(ctx context.Context, csv string, timeout time.Duration) (*operatorsv1alpha1.InstallPlan, error) {
	return c.installPlanOf(ctx, c.subscriptionKey(), csv, timeout)
}

// installPlanOf returns the InstallPlan of a Subscription that installs a
// ClusterServiceVersion, once OLM has made it.
func (c *Cluster) installPlanOf(ctx context.Context, subscription client.ObjectKey, csv string, timeout time.Duration) (*operatorsv1alpha1.InstallPlan, error) {
	var plan *operatorsv1alpha1.InstallPlan
	err := c.Poll(ctx, timeout, "OLM to plan the install of "+csv, func(ctx context.Context) (bool, error) {
		var err error
		plan, err = c.currentPlan(ctx, subscription)
		return plan != nil && slices.Contains(plan.Spec.ClusterServiceVersionNames, csv), err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, c.describeSubscription(ctx, subscription))
	}
	return plan, nil
}

// currentPlan returns the InstallPlan a Subscription's status refers to, or nil while there
// is none.
func (c *Cluster) currentPlan(ctx context.Context, subscription client.ObjectKey) (*operatorsv1alpha1.InstallPlan, error) {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Client.Get(ctx, subscription, sub); err != nil {
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

// describeSubscription says what a Subscription and its InstallPlan last showed, for errors.
func (c *Cluster) describeSubscription(ctx context.Context, subscription client.ObjectKey) string {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Client.Get(ctx, subscription, sub); err != nil {
		return fmt.Sprintf("Subscription: %v", err)
	}
	s := fmt.Sprintf("Subscription state %q, current %q, installed %q", sub.Status.State, sub.Status.CurrentCSV, sub.Status.InstalledCSV)
	for _, cond := range sub.Status.Conditions {
		if cond.Status == corev1.ConditionTrue {
			s += fmt.Sprintf(", %s: %s", cond.Type, cond.Message)
		}
	}
	plan, err := c.currentPlan(ctx, subscription)
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

// Approve approves the InstallPlan of a ClusterServiceVersion for the Subscription made last,
// as a user does under manual approval (see ApproveFor).
func (c *Cluster) Approve(ctx context.Context, csv string) error {
	return c.ApproveFor(ctx, c.subscriptionKey(), csv)
}

// ApproveFor approves a Subscription's InstallPlan of a ClusterServiceVersion, as a user does
// under manual approval: once OLM shows it waiting for approval, and again until OLM has taken
// it up. A plan that fails is an error.
func (c *Cluster) ApproveFor(ctx context.Context, subscription client.ObjectKey, csv string) error {
	plan, err := c.installPlanOf(ctx, subscription, csv, 3*time.Minute)
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
			return false, stopPolling{fmt.Errorf("InstallPlan %s failed (%s)", plan.Name, c.describeSubscription(ctx, subscription))}
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
		return fmt.Errorf("%w (%s)", err, c.describeSubscription(ctx, c.subscriptionKey()))
	}
	return nil
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
		if err := c.WaitForCSVGone(ctx, name, time.Minute); err != nil {
			return err
		}
	}
	return c.Poll(ctx, time.Minute, "the InstallPlans of Subscription "+sub.Name+" to be collected", func(ctx context.Context) (bool, error) {
		owned, err := c.InstallPlansOf(ctx, sub)
		return len(owned) == 0, err
	})
}

// WaitForCSVGone waits until a ClusterServiceVersion in OperatorsNamespace no longer exists:
// deleted by a user, or removed by OLM once a newer release replaced it.
func (c *Cluster) WaitForCSVGone(ctx context.Context, name string, timeout time.Duration) error {
	key := client.ObjectKey{Namespace: OperatorsNamespace, Name: name}
	return c.Poll(ctx, timeout, "ClusterServiceVersion "+name+" to be gone", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key, &operatorsv1alpha1.ClusterServiceVersion{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// InstallPlansOf lists the InstallPlans a Subscription owns: those OLM made for it.
func (c *Cluster) InstallPlansOf(ctx context.Context, sub *operatorsv1alpha1.Subscription) ([]operatorsv1alpha1.InstallPlan, error) {
	plans, err := c.installPlans(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(plans, func(p operatorsv1alpha1.InstallPlan) bool {
		return !slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == sub.UID })
	}), nil
}
