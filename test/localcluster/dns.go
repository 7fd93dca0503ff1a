package localcluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// corefile is the cluster DNS's configuration, kubeadm's without the root privilege to listen on
// port 53: CoreDNS listens on 1053 and its Service maps 53 to it.
const corefile = `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`

// installDNS runs CoreDNS on the real node as the cluster's DNS (kube-system/kube-dns at
// DNSServiceIP), so that pods such as OLM's catalog operator reach Services by name.
func (c *Cluster) installDNS(ctx context.Context) error {
	ns, labels := "kube-system", map[string]string{"k8s-app": "kube-dns"}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:coredns"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "coredns"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns"}, Data: map[string]string{"Corefile": corefile}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kube-dns", Labels: labels}, Spec: corev1.ServiceSpec{
			ClusterIP: DNSServiceIP, Selector: labels, Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(1053)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(1053)},
			}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns", Labels: labels}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: "coredns", DNSPolicy: corev1.DNSDefault, PriorityClassName: "system-cluster-critical",
				SecurityContext: restrictedPod(),
				Containers: []corev1.Container{{
					Name: "coredns", Image: CoreDNSImage, Args: []string{"-conf", "/etc/coredns/Corefile"},
					Ports: []corev1.ContainerPort{{Name: "dns", ContainerPort: 1053, Protocol: corev1.ProtocolUDP},
						{Name: "dns-tcp", ContainerPort: 1053, Protocol: corev1.ProtocolTCP}},
					VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
					SecurityContext: restrictedContainer(),
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}},
						PeriodSeconds: 2},
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}}},
				}},
				Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}}}}},
			}},
		}},
	}
	for _, o := range objs {
		if err := c.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating the cluster DNS's %T %s: %w", o, o.GetName(), err)
		}
	}
	return c.WaitForDeployment(ctx, client.ObjectKey{Namespace: ns, Name: "coredns"}, 3*time.Minute)
}

// restrictedPod and restrictedContainer are the security contexts of the restricted Pod
// Security Standard.
func restrictedPod() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

// WaitForDeployment waits until a Deployment has rolled out and every replica is available,
// and says what its pods show if not.
func (c *Cluster) WaitForDeployment(ctx context.Context, key client.ObjectKey, timeout time.Duration) error {
	d := &appsv1.Deployment{}
	err := c.Poll(ctx, timeout, "Deployment "+key.String()+" to be available", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		st := d.Status
		return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want, nil
	})
	if err != nil && d.Spec.Selector != nil {
		return fmt.Errorf("%w (%s)", err, c.podTrouble(ctx, d))
	}
	return err
}
