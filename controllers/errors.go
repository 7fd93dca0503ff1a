package controllers

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mycompany/app-operator/controllers/apply"
)

// errorReason classifies a reconcile error for the reconcile errors metric: NotOwned when a
// child's name is taken, the API status reason (Conflict, Forbidden, ...), or Other.
func errorReason(err error) string {
	var notOwned *apply.NotOwnedError
	if errors.As(err, &notOwned) {
		return "NotOwned"
	}
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	return "Other"
}

// blocked reports whether an error of applying the App's children needs a change, of the App or
// of what stands in its way, to go: an object of a child's name the App does not control, or a
// spec the API server refuses, or a rollback with nothing left to restore.
func blocked(err error) bool {
	var notOwned *apply.NotOwnedError
	var noTarget *NoRollbackTargetError
	return errors.As(err, &notOwned) || errors.As(err, &noTarget) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}
