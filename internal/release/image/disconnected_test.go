package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	manager = "quay.io/mycompany/app-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	helper  = "quay.io/mycompany/helper@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

// disconnectedCSV is a ClusterServiceVersion that says it runs disconnected and does: its
// manager and an init container, by digest and listed.
func disconnectedCSV() *operatorsv1alpha1.ClusterServiceVersion {
	return &operatorsv1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "app-operator.v1.1.0", Annotations: map[string]string{
			DisconnectedAnnotation: "true", "containerImage": manager}},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			RelatedImages: []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: manager}, {Name: "helper", Image: helper}},
			InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
				DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{Name: "manager", Spec: appsv1.DeploymentSpec{
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						InitContainers: []corev1.Container{{Name: "init", Image: helper}},
						Containers:     []corev1.Container{{Name: "manager", Image: manager}, {Name: "webhooks", Image: manager}},
					}},
				}}},
			}},
		},
	}
}

func TestRunsDisconnectedNamesEachImageAMirrorCouldNotServe(t *testing.T) {
	const containers = "spec.install.spec.deployments[0].spec.template.spec.containers"
	for _, tc := range []struct {
		name   string
		change func(*operatorsv1alpha1.ClusterServiceVersion)
		errs   []string // one for each image at fault
		err    string   // the whole error, where no image is at fault
	}{
		{name: "every image by digest and listed", change: func(*operatorsv1alpha1.ClusterServiceVersion) {}},
		{name: "not said: not checked", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			delete(c.Annotations, DisconnectedAnnotation)
			c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[1].Image = "other:1"
		}},
		{name: "said false: not checked", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations[DisconnectedAnnotation] = "false"
			c.Spec.RelatedImages = nil
		}},
		{name: "said otherwise", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations[DisconnectedAnnotation] = "yes"
		}, err: `ClusterServiceVersion app-operator.v1.1.0: metadata.annotations[features.operators.openshift.io/disconnected]: "yes" is neither "true" nor "false"`},
		{name: "a container by tag", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[1].Image = "quay.io/mycompany/proxy:v1"
		}, errs: []string{containers + `[1].image: "quay.io/mycompany/proxy:v1" is not named by digest`}},
		{name: "an init container by digest, not listed", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Spec.RelatedImages = c.Spec.RelatedImages[:1]
		}, errs: []string{`spec.install.spec.deployments[0].spec.template.spec.initContainers[0].image: "` + helper + `" is not in spec.relatedImages`}},
		{name: "a related image by tag", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Spec.RelatedImages = append(c.Spec.RelatedImages, operatorsv1alpha1.RelatedImage{Name: "extra", Image: "quay.io/mycompany/extra:v1"})
		}, errs: []string{`spec.relatedImages[2].image: "quay.io/mycompany/extra:v1" is not named by digest`}},
		{name: "the containerImage by tag, and the manager unlisted", change: func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations["containerImage"] = "quay.io/mycompany/app-operator:v1.1.0"
			c.Spec.RelatedImages = c.Spec.RelatedImages[1:]
		}, errs: []string{
			`metadata.annotations.containerImage: "quay.io/mycompany/app-operator:v1.1.0" is not named by digest`,
			containers + `[0].image: "` + manager + `" is not in spec.relatedImages`,
			containers + `[1].image: "` + manager + `" is not in spec.relatedImages`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csv := disconnectedCSV()
			tc.change(csv)
			err := RunsDisconnected(csv)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			if tc.errs == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), `ClusterServiceVersion app-operator.v1.1.0 says features.operators.openshift.io/disconnected: "true"`)
			lines := strings.Split(err.Error(), "\n")
			require.Equal(t, tc.errs, lines[1:], "one line for each image, naming its field")
		})
	}
}

func TestPinningABundleThatSaysItRunsDisconnectedChecksItDoes(t *testing.T) {
	tag := "quay.io/mycompany/app-operator:v1.1.0"
	src := bundleDir(t, tag)
	path := filepath.Join(src, CSVFile)
	csv, err := readCSV(src)
	require.NoError(t, err)
	csv["metadata"].(map[string]any)["annotations"].(map[string]any)[DisconnectedAnnotation] = "true"
	raw, err := yaml.Marshal(csv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	dst := filepath.Join(t.TempDir(), "bundle")
	err = PinDigests(src, dst, map[string]string{tag: manager})
	require.ErrorContains(t, err, `spec.install.spec.deployments[0].spec.template.spec.containers[1].image: "other:1" is not named by digest`)
	require.NoDirExists(t, dst, "nothing is written")

	err = PinDigests(src, dst, map[string]string{tag: manager, "other:1": helper})
	require.ErrorContains(t, err, `spec.install.spec.deployments[0].spec.template.spec.containers[1].image: "`+helper+`" is not in spec.relatedImages`)

	spec := csv["spec"].(map[string]any)
	spec["relatedImages"] = append(spec["relatedImages"].([]any), map[string]any{"name": "proxy", "image": "other:1"})
	raw, err = yaml.Marshal(csv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	require.NoError(t, PinDigests(src, dst, map[string]string{tag: manager, "other:1": helper}))
	pinned, err := os.ReadFile(filepath.Join(dst, CSVFile))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(pinned), helper), "the container and its relatedImages entry")
}
