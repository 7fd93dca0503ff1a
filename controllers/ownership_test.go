package controllers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/envtest"
)

// An object that no controller owns, and that lacks the operator's label (so the operator's
// cache does not show it), keeps its content when an App wants its name: the App reports it,
// and gets its own once the name is free.
func TestAnAppLeavesAnObjectItDoesNotControlUntouched(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"team": "dns"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53}}, Selector: map[string]string{"app": "dns"}},
	}
	require.NoError(t, env.Client.Create(ctx, foreign))

	app := newApp(ns, "web")
	require.NoError(t, env.Client.Create(ctx, app))
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, app)
		d := meta.FindStatusCondition(app.Status.Conditions, appv1.ConditionDegraded)
		c.NotNil(d)
		c.Equal(metav1.ConditionTrue, d.Status)
		c.Contains(d.Message, "Service "+ns+"/web already exists and is not controlled by this App")
	})
	after := &corev1.Service{}
	require.NoError(t, env.Client.Get(ctx, key(foreign), after))
	require.Equal(t, foreign.ResourceVersion, after.ResourceVersion, "the Service is untouched")

	require.NoError(t, env.Client.Delete(ctx, after))
	envtest.Eventually(t, func(c *require.Assertions) {
		var svc corev1.Service
		get(c, app, &svc)
		c.True(metav1.IsControlledBy(&svc, app))
		c.Equal(int32(80), svc.Spec.Ports[0].Port)
		c.Equal([]corev1.ServicePort{svc.Spec.Ports[0]}, svc.Spec.Ports, "nothing of the old Service is left")
	})
}

// A child that lost the operator's label drops out of the operator's cache; the App still
// controls it, so it is applied again, label included, and not replaced.
func TestAChildThatLostTheOperatorsLabelIsLabelledAgain(t *testing.T) {
	ctx := context.Background()
	app := newApp(env.Namespace(t), "web")
	require.NoError(t, env.Client.Create(ctx, app))
	var d appsv1.Deployment
	envtest.Eventually(t, func(c *require.Assertions) { get(c, app, &d) })
	uid := d.UID

	env.Update(t, &d, func() { delete(d.Labels, appv1.LabelManagedBy) })
	envtest.Eventually(t, func(c *require.Assertions) {
		get(c, app, &d)
		c.Equal(appv1.ManagedByValue, d.Labels[appv1.LabelManagedBy])
	})
	require.Equal(t, uid, d.UID, "the same Deployment, labelled again")
	require.True(t, metav1.IsControlledBy(&d, app))
}
