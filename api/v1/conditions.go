package v1

// Condition types of an App.
const (
	// ConditionAvailable is True when every desired pod of the current generation is available.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while a rollout is under way.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the App cannot reach its desired state without help.
	ConditionDegraded = "Degraded"
	// ConditionReconciling is True while the App does not match its spec yet: kstatus, and the
	// GitOps tools built on it, read the App as InProgress.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the App cannot match its spec until someone changes it or
	// what stands in its way: kstatus reads the App as Failed.
	ConditionStalled = "Stalled"
)

// Condition reasons of an App.
const (
	// ReasonReplicasAvailable: every desired pod is available.
	ReasonReplicasAvailable = "ReplicasAvailable"
	// ReasonReplicasUnavailable: fewer pods are available than desired.
	ReasonReplicasUnavailable = "ReplicasUnavailable"
	// ReasonRollingOut: the Deployment is replacing or adding pods.
	ReasonRollingOut = "RollingOut"
	// ReasonRolloutComplete: the Deployment runs the current pod template everywhere.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonProgressDeadlineExceeded: the rollout made no progress within its deadline.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: the Deployment cannot create pods, for example because of a quota.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonReconcileError: the operator failed to apply the desired state.
	ReasonReconcileError = "ReconcileError"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonDeploymentPending: the Deployment has not reported on the current spec yet.
	ReasonDeploymentPending = "DeploymentPending"
	// ReasonReconciled: the App matches its spec.
	ReasonReconciled = "Reconciled"
	// ReasonRolledBack: a rollout made no progress within its deadline, and the operator
	// restored the last pod template that was fully available.
	ReasonRolledBack = "RolledBack"
)
