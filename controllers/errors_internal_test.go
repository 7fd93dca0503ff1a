package controllers

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mycompany/app-operator/controllers/apply"
)

func TestErrorReason(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&apply.NotOwnedError{Kind: "Service"}, "NotOwned"},
		{fmt.Errorf("applying: %w", &apply.NotOwnedError{Kind: "Service"}), "NotOwned"},
		{apierrors.NewConflict(gr, "web", nil), "Conflict"},
		{apierrors.NewForbidden(gr, "web", nil), "Forbidden"},
		{context.DeadlineExceeded, "Other"},
	} {
		require.Equal(t, tc.want, errorReason(tc.err), "%v", tc.err)
	}
}
