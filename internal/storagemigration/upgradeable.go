package storagemigration

import (
	"context"
	"fmt"

	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorCondition is one condition of the OperatorCondition that OLM makes for the installed
// ClusterServiceVersion; OLM reads Upgradeable from it before it replaces the operator. It is
// operator-lib's conditions.Condition with the namespace given, rather than read from a
// ServiceAccount mount, so that it works wherever the manager runs.
type OperatorCondition struct {
	// Reader reads the OperatorCondition from the API server: the operator may read only its
	// own, which rules out a cache of them all.
	Reader client.Reader
	Client client.Client
	Key    client.ObjectKey // the ClusterServiceVersion's name and the operator's namespace
	Type   string
}

var _ conditions.Condition = &OperatorCondition{}

// Get returns the condition, or an error when it is not set.
func (o *OperatorCondition) Get(ctx context.Context) (*metav1.Condition, error) {
	oc := &operatorsv2.OperatorCondition{}
	if err := o.Reader.Get(ctx, o.Key, oc); err != nil {
		return nil, err
	}
	c := meta.FindStatusCondition(oc.Spec.Conditions, o.Type)
	if c == nil {
		return nil, fmt.Errorf("OperatorCondition %s has no condition %s", o.Key, o.Type)
	}
	return c, nil
}

// Set sets the condition, writing only when it changes.
func (o *OperatorCondition) Set(ctx context.Context, status metav1.ConditionStatus, options ...conditions.Option) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		oc := &operatorsv2.OperatorCondition{}
		if err := o.Reader.Get(ctx, o.Key, oc); err != nil {
			return err
		}
		c := metav1.Condition{Type: o.Type, Status: status, ObservedGeneration: oc.Generation}
		for _, opt := range options {
			opt(&c)
		}
		if !meta.SetStatusCondition(&oc.Spec.Conditions, c) {
			return nil
		}
		return o.Client.Update(ctx, oc)
	})
}
