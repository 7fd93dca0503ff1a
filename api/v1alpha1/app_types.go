package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppSpec is the desired state of an App.
type AppSpec struct {
	// Replicas is the desired number of pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the container image to run.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Image string `json:"image"`
}

// AppStatus is the observed state of an App.
type AppStatus struct {
	// AvailableReplicas is the number of available pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
}

// App runs a container image as a managed workload. This is the original, flat version of
// the API, no longer served: mycompany.com/v1 holds every field of it and more. It stays in
// the CRD, unserved, so that Apps 0.1.0 stored in it can still be read, converted and migrated.
// +kubebuilder:object:root=true
// +kubebuilder:unservedversion
// +kubebuilder:deprecatedversion:warning="mycompany.com/v1alpha1 App is deprecated; use mycompany.com/v1, which holds every field of it and more"
// +kubebuilder:resource:path=apps,singular=app,scope=Namespaced,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=".spec.image"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas"
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
