package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeploymentName is the manager Deployment of App Operator's ClusterServiceVersion.
const DeploymentName = "app-operator-controller-manager"

// Operator is a manager process run as OLM's Deployment describes it.
type Operator struct {
	*Process
	// MetricsURL and ProbeURL are the manager's metrics and health endpoints.
	MetricsURL, ProbeURL string
	// WebhookAddr is where the manager serves its webhooks.
	WebhookAddr string
	// Log is the manager's log file.
	Log string
	// ServiceAccount is the identity the manager runs as.
	ServiceAccount string
}

// RunOperator runs the manager binary the way the pod of OLM's Deployment would run it: with
// the container's arguments and environment, the webhook certificate OLM made, and the
// Deployment's ServiceAccount as identity (through impersonation, so the RBAC the
// ClusterServiceVersion grants is what the manager gets). The API server's calls to the
// webhook Service OLM made reach this process. name tells processes apart in logs.
func (c *Cluster) RunOperator(ctx context.Context, name, manager string) (*Operator, error) {
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName}
	if err := c.Poll(ctx, 2*time.Minute, "OLM to create Deployment "+key.String(), func(ctx context.Context) (bool, error) {
		return c.Client.Get(ctx, key, d) == nil, nil
	}); err != nil {
		return nil, err
	}
	var container *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == "manager" {
			container = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if container == nil {
		return nil, fmt.Errorf("Deployment %s has no container named manager", key)
	}

	dir := filepath.Join(c.Dir, name)
	certDir := filepath.Join(dir, "serving-certs")
	if err := c.writeWebhookCert(ctx, certDir); err != nil {
		return nil, err
	}
	sa := "system:serviceaccount:" + OperatorsNamespace + ":" + d.Spec.Template.Spec.ServiceAccountName
	kubeconfig := filepath.Join(dir, "kubeconfig.yaml")
	if err := c.impersonatingKubeconfig(kubeconfig, sa); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	metrics, probes, webhook := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1]), ports[2]

	args := []string{}
	if len(container.Command) > 1 {
		args = append(args, container.Command[1:]...)
	}
	for _, a := range container.Args {
		if strings.HasPrefix(a, "--metrics-bind-address") || strings.HasPrefix(a, "--health-probe-bind-address") {
			continue
		}
		args = append(args, a)
	}
	args = append(args, "--metrics-bind-address="+metrics, "--health-probe-bind-address="+probes,
		fmt.Sprintf("--webhook-port=%d", webhook), "--webhook-cert-path="+certDir,
		// Outside a pod the manager cannot read its namespace from the ServiceAccount mount.
		"--leader-election-namespace="+OperatorsNamespace)
	args = append(args, c.ManagerArgs...)
	env := []string{"KUBECONFIG=" + kubeconfig}
	for _, e := range container.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+OperatorsNamespace) // as the downward API would
		}
	}
	p, err := StartProcess(c.Dir, name, manager, args, env)
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	if err := c.Routes.Set(OperatorsNamespace, DeploymentName+"-service", fmt.Sprintf("127.0.0.1:%d", webhook)); err != nil {
		return nil, err
	}
	op := &Operator{Process: p, MetricsURL: "https://" + metrics + "/metrics", ProbeURL: "http://" + probes, ServiceAccount: sa,
		WebhookAddr: fmt.Sprintf("127.0.0.1:%d", webhook), Log: filepath.Join(c.LogDir(), name+".log")}
	err = c.Poll(ctx, time.Minute, "manager "+name+" to be ready", func(ctx context.Context) (bool, error) {
		if err := p.ExitError(); err != nil {
			return false, stopPolling{err} // a manager that ended before it was ready will not become ready
		}
		resp, err := http.Get(op.ProbeURL + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return op, err
}

// writeWebhookCert copies the serving certificate OLM made for the webhook Service where the
// manager reads it, as OLM's volume mount would.
func (c *Cluster) writeWebhookCert(ctx context.Context, dir string) error {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: OperatorsNamespace, Name: DeploymentName + "-service-cert"}
	if err := c.Poll(ctx, 2*time.Minute, "OLM to create Secret "+key.String(), func(ctx context.Context) (bool, error) {
		return c.Client.Get(ctx, key, secret) == nil, nil
	}); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if err := os.WriteFile(filepath.Join(dir, k), secret.Data[k], 0o600); err != nil {
			return err
		}
	}
	return nil
}

// impersonatingKubeconfig writes a kubeconfig that acts as a ServiceAccount.
func (c *Cluster) impersonatingKubeconfig(path, serviceAccount string) error {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	ns := strings.Split(serviceAccount, ":")[2]
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = serviceAccount
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}
