// Package olm holds what the manager reads of the OLM install that runs it: the
// ClusterServiceVersion that installed it, which owns what the manager makes or keeps for it.
package olm

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=operators.coreos.com,namespace=system,resources=clusterserviceversions,verbs=get

// csvKind is the kind of OLM's ClusterServiceVersion.
var csvKind = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}

// Owner reads the metadata of the ClusterServiceVersion that key names and returns a
// reference to it, neither controller nor blocking: the caller says which it is.
func Owner(ctx context.Context, r client.Reader, key client.ObjectKey) (metav1.OwnerReference, error) {
	csv := &metav1.PartialObjectMetadata{}
	csv.SetGroupVersionKind(csvKind)
	if err := r.Get(ctx, key, csv); err != nil {
		return metav1.OwnerReference{}, err
	}
	apiVersion, kind := csvKind.ToAPIVersionAndKind()
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: csv.Name, UID: csv.UID}, nil
}
