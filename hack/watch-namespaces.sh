#!/usr/bin/env bash
# Prints what make deploy adds to its overlay for WATCH_NAMESPACES, which config/watch-namespaces
# completes: the namespaces as a WatchNamespaces object (kustomize reads it and prints it not),
# and a RoleBinding of the manager's ClusterRole in each. Refuses, naming the variable, a list
# that is not of distinct namespace names; then it prints nothing.
#
#   hack/watch-namespaces.sh team-a,team-b
set -euo pipefail

list=$1
IFS=, read -ra names <<<"$list"
declare -A seen
for ns in "${names[@]}"; do
	if [[ ! $ns =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ || ${#ns} -gt 63 ]]; then
		echo "WATCH_NAMESPACES: \"$ns\" is not a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (WATCH_NAMESPACES=$list)" >&2
		exit 2
	fi
	if [[ -n ${seen[$ns]:-} ]]; then
		echo "WATCH_NAMESPACES: $ns is listed twice (WATCH_NAMESPACES=$list)" >&2
		exit 2
	fi
	seen[$ns]=1
done

cat <<YAML
apiVersion: config.mycompany.com/v1
kind: WatchNamespaces
metadata:
  name: watch-namespaces
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  list: "$(IFS=,; echo "${names[*]}")"
  namespaceSelector:
    matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values: [$(printf '"%s", ' "${names[@]}" | sed 's/, $//')]
YAML
for ns in "${names[@]}"; do
	cat <<YAML
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: app-operator-watched-namespace-rolebinding
  namespace: "$ns"
  labels:
    app.kubernetes.io/name: app-operator
    app.kubernetes.io/managed-by: kustomize
    app.kubernetes.io/component: watched-namespace
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
YAML
done
