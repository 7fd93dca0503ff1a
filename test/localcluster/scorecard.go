package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ScorecardSuite is the suite label of App Operator's own scorecard tests.
const ScorecardSuite = "app"

// RunScorecard runs the tests of App Operator's suite in a scorecard configuration the way
// operator-sdk scorecard runs them: each as a pod of the image the configuration names (pulled
// from the cluster's registry), in a namespace of its own, whose ServiceAccount may edit Apps
// there, and reads the TestStatus the pod prints. The basic and olm suites run operator-sdk's
// own image, which cannot be pulled here; they are listed as skipped.
func (c *Cluster) RunScorecard(ctx context.Context, configPath string) (results []v1alpha3.TestResult, skipped []string, err error) {
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return nil, nil, err
	}
	var cfg v1alpha3.Configuration
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", configPath, err)
	}
	ns := "scorecard-" + time.Now().Format("150405")
	if err := c.scorecardNamespace(ctx, ns); err != nil {
		return nil, nil, err
	}
	defer func() {
		_ = c.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}()
	for _, stage := range cfg.Stages {
		for _, t := range stage.Tests {
			if t.Labels["suite"] != ScorecardSuite {
				skipped = append(skipped, t.Labels["test"])
				continue
			}
			status, err := c.scorecardTest(ctx, ns, t.Labels["test"], t.Image, t.Entrypoint)
			if err != nil {
				return nil, nil, err
			}
			results = append(results, status.Results...)
		}
	}
	return results, skipped, nil
}

// scorecardNamespace makes a restricted namespace whose scorecard ServiceAccount has the
// cluster's edit role there, as a user who runs Apps would: App Operator's editor role
// aggregates into it, and an App may run only what its author could run (Deployments).
func (c *Cluster) scorecardNamespace(ctx context.Context, ns string) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorecard"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorecard"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scorecard"}}},
	} {
		if err := c.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating the scorecard's %T: %w", o, err)
		}
	}
	return nil
}

// scorecardTest runs one test as a pod and returns what it printed.
func (c *Cluster) scorecardTest(ctx context.Context, ns, name, testImage string, entrypoint []string) (*v1alpha3.TestStatus, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorecard-test-" + name}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: "scorecard", SecurityContext: restrictedPod(),
		Containers: []corev1.Container{{Name: "test", Image: testImage, Command: entrypoint, SecurityContext: restrictedContainer(),
			Env: []corev1.EnvVar{{Name: "SCORECARD_NAMESPACE", Value: ns}}}},
		ActiveDeadlineSeconds: ptr.To(int64(300)),
	}}
	if err := c.Client.Create(ctx, pod); err != nil {
		return nil, err
	}
	if err := c.Poll(ctx, 6*time.Minute, "scorecard test "+name+" to finish", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed, nil
	}); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, c.podTroubleByLabel(ctx, ns, nil))
	}
	out, err := c.Logs(ctx, pod, "test")
	if err != nil {
		return nil, err
	}
	var status v1alpha3.TestStatus
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		return nil, fmt.Errorf("test %s printed no TestStatus (%w): %s", name, err, strings.TrimSpace(out))
	}
	if err := c.Client.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	return &status, nil
}
