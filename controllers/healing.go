package controllers

import (
	"fmt"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/controllers/apply"
)

// ReasonHealed is the reason of the Event of a reconcile that undid someone else's change to
// the App's children.
const ReasonHealed = "Healed"

// healing says what an apply healed, or "" when it did what the App asked for. A child is
// healed when it was changed back to a configuration the operator had applied before and
// still wants (apply.Reverted), deleted because such a change cannot be changed back in place
// (apply.Recreated), or created while the App's generation was already observed: it existed,
// or something in its way was removed.
func healing(app *appv1.App, result apply.Result, kind, name string) string {
	switch {
	case result == apply.Reverted:
		return fmt.Sprintf("reverted a change to %s %s", kind, name)
	case result == apply.Recreated:
		return fmt.Sprintf("deleted %s %s to create it again: its change cannot be reverted in place", kind, name)
	case result == apply.Created && app.Status.ObservedGeneration != 0 && app.Status.ObservedGeneration == app.Generation:
		return fmt.Sprintf("recreated %s %s, which was missing", kind, name)
	}
	return ""
}
