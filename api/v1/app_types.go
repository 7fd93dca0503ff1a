package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// AppSpec is the desired state of an App: one container image run as a Deployment,
// optionally exposed by a Service, scaled by a HorizontalPodAutoscaler and protected by a
// PodDisruptionBudget.
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.targetPort) || (has(self.ports) && self.ports.exists(p, p.name == self.service.targetPort))",message="must name one of spec.ports",fieldPath=".service.targetPort"
type AppSpec struct {
	// Image is the container image to run, as a reference such as
	// registry.example.com/team/app:1.2.3 or an image pinned by digest.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Image string `json:"image"`

	// Replicas is the desired number of pods. While autoscaling is set the
	// HorizontalPodAutoscaler owns the replica count and this field is not applied.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Command overrides the image's entrypoint.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Command []string `json:"command,omitempty"`

	// Args are the arguments to the entrypoint.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`

	// Env lists environment variables to set in the container.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvFrom lists sources (ConfigMaps, Secrets) to populate environment variables from.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// Ports are the named ports the container listens on. When omitted, one port named
	// "http" on 8080 is assumed.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Ports []AppPort `json:"ports,omitempty"`

	// Service configures the Service in front of the pods.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// Resources are the container's compute resource requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Probes are the container's liveness, readiness and startup probes.
	// +optional
	Probes *Probes `json:"probes,omitempty"`

	// Autoscaling, when set, creates a HorizontalPodAutoscaler that owns the replica count.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// DisruptionBudget, when set, creates a PodDisruptionBudget for the pods.
	// +optional
	DisruptionBudget *DisruptionBudgetSpec `json:"disruptionBudget,omitempty"`

	// Rollout tunes the Deployment's rolling update.
	// +optional
	Rollout *RolloutSpec `json:"rollout,omitempty"`

	// ServiceAccountName is the ServiceAccount the pods run as.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// ImagePullSecrets name Secrets in the App's namespace used to pull the image.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// NodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods schedule onto nodes with matching taints.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity holds the pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PodLabels are extra labels for the pods. They cannot override the labels the
	// operator uses to select the pods.
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are extra annotations for the pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// SecurityContext holds the pod and container security settings. Defaults satisfy the
	// restricted Pod Security Standard.
	// +optional
	SecurityContext *SecurityContext `json:"securityContext,omitempty"`
}

// AppPort is a named port the container listens on.
type AppPort struct {
	// Name identifies the port; Services and probes refer to it. An IANA service name:
	// at most 15 lowercase letters, digits and hyphens.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`

	// ContainerPort is the port number the container listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort int32 `json:"containerPort"`

	// Protocol is TCP, UDP or SCTP.
	// +kubebuilder:validation:Enum=TCP;UDP;SCTP
	// +kubebuilder:default=TCP
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// ServiceSpec configures the Service that exposes the App.
type ServiceSpec struct {
	// Enabled creates the Service when true (the default); false removes it.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Type is ClusterIP (the default), NodePort or LoadBalancer.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`

	// Port is the port the Service listens on. Defaults to 80.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// TargetPort names the container port the Service forwards to. Defaults to the first
	// of spec.ports.
	// +kubebuilder:validation:MaxLength=15
	// +optional
	TargetPort string `json:"targetPort,omitempty"`

	// Annotations are added to the Service, for example to configure a load balancer.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Probes are the container's health checks.
type Probes struct {
	// Liveness restarts the container when it fails.
	// +optional
	Liveness *corev1.Probe `json:"liveness,omitempty"`

	// Readiness removes the pod from Service endpoints while it fails.
	// +optional
	Readiness *corev1.Probe `json:"readiness,omitempty"`

	// Startup holds off the other probes until the container has started.
	// +optional
	Startup *corev1.Probe `json:"startup,omitempty"`
}

// AutoscalingSpec configures a HorizontalPodAutoscaler.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas",fieldPath=".minReplicas"
type AutoscalingSpec struct {
	// MinReplicas is the lower bound of the replica count. Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the upper bound of the replica count.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilizationPercentage is the average CPU utilization, as a percentage of
	// the requested CPU, that the autoscaler aims for. Defaults to 80.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// DisruptionBudgetSpec configures a PodDisruptionBudget. Set exactly one of its fields.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="set exactly one of minAvailable and maxUnavailable"
type DisruptionBudgetSpec struct {
	// MinAvailable is the number or percentage of pods that must stay available.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable is the number or percentage of pods that may be unavailable.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// RolloutSpec tunes the Deployment's rolling update.
type RolloutSpec struct {
	// MaxSurge is the number or percentage of pods that may be created above the desired
	// count during a rollout.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// MaxUnavailable is the number or percentage of pods that may be unavailable during a
	// rollout.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// ProgressDeadlineSeconds is how long a rollout may make no progress before the App is
	// reported Degraded and, unless AutoRollback is false, rolled back.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// AutoRollback restores the last pod template whose rollout completed with every pod
	// available, when a new template makes no progress within ProgressDeadlineSeconds. The
	// failed template is not tried again until the App's pod template changes. False leaves a
	// failed rollout as it stands, for a person to act on. Unset means true.
	// +optional
	AutoRollback *bool `json:"autoRollback,omitempty"`
}

// AutoRollbackEnabled reports whether a failed rollout of the App is rolled back: unless
// spec.rollout.autoRollback is false.
func (s *AppSpec) AutoRollbackEnabled() bool {
	return s.Rollout == nil || s.Rollout.AutoRollback == nil || *s.Rollout.AutoRollback
}

// SecurityContext holds the pod-level and container-level security settings.
type SecurityContext struct {
	// Pod is the pod-level security context.
	// +optional
	Pod *corev1.PodSecurityContext `json:"pod,omitempty"`

	// Container is the security context of the App's container.
	// +optional
	Container *corev1.SecurityContext `json:"container,omitempty"`
}

// AppStatus is the observed state of an App.
type AppStatus struct {
	// ObservedGeneration is the generation of the spec that the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// DesiredReplicas is the number of pods the App aims for: spec.replicas, or the
	// HorizontalPodAutoscaler's count when spec.autoscaling is set.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// Replicas is the number of pods the Deployment targets.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of pods that have been ready for at least the
	// Deployment's minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// UpdatedReplicas is the number of pods that run the current pod template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// Selector is the label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Image is the image that every pod runs once the latest rollout has completed.
	// +optional
	Image string `json:"image,omitempty"`

	// ServiceName is the name of the Service that exposes the App, when there is one.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// Healed counts the changes to the App's children that the operator undid: a child
	// deleted, or edited by someone else, brought back to what the App asks for.
	// +optional
	Healed *Healed `json:"healed,omitempty"`

	// Rollout records what an automatic rollback needs, so that it survives a restart of the
	// operator.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`

	// Conditions are Available, Progressing and Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Healed counts the reconciles that undid someone else's change to the App's children, and
// tells the last of them.
type Healed struct {
	// Count is how many reconciles healed a child.
	Count int32 `json:"count"`

	// Last says what the last of them healed, for example "recreated Service web, which was
	// missing".
	Last string `json:"last"`

	// Time is when the last of them healed it.
	Time metav1.Time `json:"time"`
}

// RolloutStatus records the App's last good pod template and its last rollback.
type RolloutStatus struct {
	// AvailableTemplate identifies the last pod template whose rollout completed with every
	// pod available: a hash of the Deployment's template. An automatic rollback restores it
	// from the Deployment's ReplicaSet of that template.
	// +optional
	AvailableTemplate string `json:"availableTemplate,omitempty"`

	// RolledBack is the rollout the operator rolled back, until the App's pod template
	// changes.
	// +optional
	RolledBack *RolledBack `json:"rolledBack,omitempty"`
}

// RolledBack is a rollout that made no progress within its deadline and was rolled back.
type RolledBack struct {
	// Template is a hash of the pod template the App's spec asks for, which failed. The
	// operator does not apply it again.
	Template string `json:"template"`

	// Image is the image that failed.
	Image string `json:"image"`

	// Time is when the rollout was rolled back.
	Time metav1.Time `json:"time"`
}

// App runs a container image as a managed workload: a Deployment, a Service and,
// when asked, a HorizontalPodAutoscaler and a PodDisruptionBudget.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=apps,singular=app,scope=Namespaced,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=".spec.image"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".status.desiredReplicas"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=".status.conditions[?(@.type==\"Available\")].status"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type==\"Reconciling\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the App.
	Spec AppSpec `json:"spec"`

	// Status is the observed state of the App.
	// +optional
	Status AppStatus `json:"status,omitempty"`
}

// AppList is a list of Apps.
// +kubebuilder:object:root=true
type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}
