// Package v1alpha1 contains the original, flat App API of the mycompany.com group. It converts
// to and from the v1 hub without loss.
// +kubebuilder:object:generate=true
// +groupName=mycompany.com
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "mycompany.com", Version: "v1alpha1"}

	// SchemeBuilder adds the types of this version to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
