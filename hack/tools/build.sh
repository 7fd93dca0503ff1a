#!/usr/bin/env bash
# Builds one pinned tool from its module under hack/tools into bin/, and shows progress while
# it builds: a cold build of the control plane takes minutes. Progress goes to stderr, so that
# a target whose output is piped (make deploy-manifests) stays clean when it builds a tool first.
#
#   hack/tools/build.sh <module> <package> [<output name>]
#
# The Kubernetes commands and metrics-server get their version stamped in, or they report v0.0.0.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
module=$1 pkg=$2 out=${3:-$(basename "$2")}
dir=$root/hack/tools/$module
mkdir -p "$root/bin"

# pinned prints the version this tool's module pins of a module.
pinned() { (cd "$dir" && go list -m -f '{{.Version}}' "$1"); }

ldflags="-s -w"
tags=""
case $module in
kube)
	# Static, as Kubernetes builds its own releases. metrics-server runs in an image that holds
	# nothing but the binary, and it shares its libraries' compiled packages with the control
	# plane only when both are built alike.
	export CGO_ENABLED=0
	case $pkg in
	k8s.io/kubernetes/*)
		v=$(pinned k8s.io/kubernetes)
		minor=$(echo "$v" | cut -d. -f2)
		ldflags="$ldflags -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
		;;
	sigs.k8s.io/metrics-server/*)
		# Where metrics-server's own release build stamps its version.
		ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$(pinned sigs.k8s.io/metrics-server)"
		;;
	esac
	;;
olm | node)
	# These run in the local cluster's images, which hold nothing but the binary: static. opm
	# without these tags needs the gpgme C library.
	export CGO_ENABLED=0
	tags="json1 containers_image_openpgp"
	;;
prom)
	# promtool's service discovery plugins (cloud SDKs) are not needed to test alerting rules.
	tags="remove_all_sd"
	;;
esac

start=$(date +%s)
echo ">> building $out ($module tools module)" >&2
(cd "$dir" && GONOSUMDB=github.com/operator-framework/operator-lifecycle-manager \
	go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$root/bin/$out.tmp" "$pkg") &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	for _ in $(seq 30); do
		sleep 1
		kill -0 "$pid" 2>/dev/null || break
	done
	kill -0 "$pid" 2>/dev/null && echo "   ... still building $out, $(( $(date +%s) - start ))s so far" >&2
done
wait "$pid"
mv "$root/bin/$out.tmp" "$root/bin/$out"
echo "   built bin/$out in $(( $(date +%s) - start ))s" >&2
