package webhook

import (
	"testing"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

func TestRequiredAccess(t *testing.T) {
	app := func(image, account string) *appv1.App {
		return &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec: appv1.AppSpec{Image: image, ServiceAccountName: account}}
	}
	cases := []struct {
		name     string
		op       admissionv1.Operation
		old, app *appv1.App
		want     []string
	}{
		{"a new App", admissionv1.Create, nil, app("nginx", ""), []string{"spec: create deployments.apps in namespace shop"}},
		{"a new App as the default account", admissionv1.Create, nil, app("nginx", "default"), []string{"spec: create deployments.apps in namespace shop"}},
		{"a new App as an account", admissionv1.Create, nil, app("nginx", "deployer"), []string{
			"spec: create deployments.apps in namespace shop", "spec.serviceAccountName: use serviceaccounts deployer in namespace shop"}},
		{"a changed spec", admissionv1.Update, app("nginx", ""), app("nginx:2", ""), []string{"spec: update deployments.apps in namespace shop"}},
		{"a changed spec of an App with an account", admissionv1.Update, app("nginx", "deployer"), app("nginx:2", "deployer"), []string{
			"spec: update deployments.apps in namespace shop", "spec.serviceAccountName: use serviceaccounts deployer in namespace shop"}},
		// The defaulting webhook has filled in the defaults of the App updated.
		{"an unchanged spec", admissionv1.Update, defaulted(app("nginx", "deployer")), defaulted(app("nginx", "deployer")), nil},
		{"an App stored without defaults, which the update adds", admissionv1.Update, app("nginx", "deployer"), defaulted(app("nginx", "deployer")), nil},
		{"an App stored without defaults, whose spec the update changes", admissionv1.Update, app("nginx", ""), defaulted(app("nginx:2", "")), []string{
			"spec: update deployments.apps in namespace shop"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range requiredAccess(tc.op, tc.old, tc.app) {
				got = append(got, a.field.String()+": "+describe(a.attrs))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func defaulted(app *appv1.App) *appv1.App {
	appv1.SetDefaults(app)
	return app
}
