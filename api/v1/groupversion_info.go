// Package v1 contains the v1 API of the mycompany.com group: the full App API and the
// conversion hub that every other version converts through.
// +kubebuilder:object:generate=true
// +groupName=mycompany.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "mycompany.com", Version: "v1"}

	// SchemeBuilder adds the types of this version to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
