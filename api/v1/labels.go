package v1

// Labels the operator puts on every object it manages. LabelInstance and LabelManagedBy
// select an App's pods; they never change for the life of an App.
const (
	// LabelInstance holds the name of the App an object belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy marks objects managed by App Operator; the operator's caches select on it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "app-operator"
)
