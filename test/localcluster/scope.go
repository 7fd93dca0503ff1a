package localcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// The checks of which namespaces an install serves, for OLM's namespaced installs and the
// Helm chart's watchNamespaces alike. Each creates Apps whose pods run on the fake nodes.

// ScopeAppName names the valid App each check creates in a namespace, ScopeBadAppName the one
// with a bad image.
const (
	ScopeAppName    = "web"
	ScopeBadAppName = "bad"
)

// badImage is refused by the validating webhook, not by the CRD's schema.
const badImage = "registry.example.com/web:not a tag"

func scopeApp(ns, name, image string) *appv1.App {
	app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appv1.AppSpec{Image: image, Replicas: ptr.To(int32(1))}}
	OnFakeNodes(&app.Spec)
	return app
}

// CheckServed checks that an install serves ns: a valid App created there is defaulted (the
// restricted security context filled in) and becomes Available with its Deployment, and an App
// with a bad image is refused by the validating webhook, which names spec.image.
func (c *Cluster) CheckServed(ctx context.Context, ns string) error {
	app := scopeApp(ns, ScopeAppName, "registry.example.com/team/web:1.0")
	if err := c.Client.Create(ctx, app); err != nil {
		return err
	}
	if app.Spec.SecurityContext == nil {
		return fmt.Errorf("App %s/%s: no defaulting webhook filled in the security context", ns, app.Name)
	}
	if err := c.WaitForAppAvailable(ctx, client.ObjectKeyFromObject(app), 2*time.Minute); err != nil {
		return err
	}
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}); err != nil {
		return fmt.Errorf("App %s/%s is Available without its Deployment: %w", ns, app.Name, err)
	}
	err := c.Client.Create(ctx, scopeApp(ns, ScopeBadAppName, badImage))
	if err == nil {
		return fmt.Errorf("an App with a bad image in %s was admitted: no validating webhook refused it", ns)
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.image") {
		return fmt.Errorf("an App with a bad image in %s: want the validating webhook's refusal naming spec.image: %w", ns, err)
	}
	return nil
}

// CheckLeftAlone checks that no install serves ns: a valid App and one with a bad image are
// both stored as written (no defaults, no refusal), and for quiet neither gets a status or a
// Deployment. It returns the valid App.
func (c *Cluster) CheckLeftAlone(ctx context.Context, ns string, quiet time.Duration) (*appv1.App, error) {
	app := scopeApp(ns, ScopeAppName, "registry.example.com/team/web:1.0")
	if err := c.Client.Create(ctx, app); err != nil {
		return nil, err
	}
	if app.Spec.SecurityContext != nil {
		return nil, fmt.Errorf("App %s/%s was defaulted by a webhook", ns, app.Name)
	}
	if err := c.Client.Create(ctx, scopeApp(ns, ScopeBadAppName, badImage)); err != nil {
		return nil, fmt.Errorf("an App with a bad image in %s was refused: %w", ns, err)
	}
	deadline := time.Now().Add(quiet)
	for {
		for _, name := range []string{ScopeAppName, ScopeBadAppName} {
			key := client.ObjectKey{Namespace: ns, Name: name}
			got := &appv1.App{}
			if err := c.Client.Get(ctx, key, got); err != nil {
				return nil, err
			}
			if got.Status.ObservedGeneration != 0 || len(got.Status.Conditions) > 0 {
				return nil, fmt.Errorf("App %s was reconciled: status %+v", key, got.Status)
			}
			switch err := c.Client.Get(ctx, key, &appsv1.Deployment{}); {
			case err == nil:
				return nil, fmt.Errorf("App %s has a Deployment", key)
			case !apierrors.IsNotFound(err):
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			return app, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// MayAccess says whether ServiceAccount name of namespace may list Apps and Deployments in
// ns: true if it may list both, false if it may list neither, and an error otherwise.
func (c *Cluster) MayAccess(ctx context.Context, namespace, name, ns string) (bool, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	sa, err := client.New(cfg, client.Options{Scheme: c.Client.Scheme()})
	if err != nil {
		return false, err
	}
	var allowed, forbidden []string
	var errs []error
	for _, list := range []client.ObjectList{&appv1.AppList{}, &appsv1.DeploymentList{}} {
		kind := fmt.Sprintf("%T", list)
		switch err := sa.List(ctx, list, client.InNamespace(ns)); {
		case err == nil:
			allowed = append(allowed, kind)
		case apierrors.IsForbidden(err):
			forbidden = append(forbidden, kind)
		default:
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	if len(allowed) > 0 && len(forbidden) > 0 {
		return false, fmt.Errorf("%s/%s in %s may list %v but not %v", namespace, name, ns, allowed, forbidden)
	}
	return len(forbidden) == 0, nil
}
