#!/usr/bin/env bash
# build-kubectl.sh: builds kubectl (k8s.io/kubernetes/cmd/kubectl at the version in
# K8S_VERSION, through the Go module proxy, in this nested module) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver/<version>/kubectl, outside the repo,
# and prints its path. Skips the build when it is there (FORCE=1 rebuilds).
# fakeapi/serve's kubectl test uses it when CACHELAB_KUBECTL names it, or when no
# kubectl is on PATH.
set -euo pipefail
cd "$(dirname "$0")"
K8S_VERSION=$(cat K8S_VERSION)
BIN=${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver/$K8S_VERSION
if [ -x "$BIN/kubectl" ] && [ -z "${FORCE:-}" ]; then
	echo "$BIN/kubectl"
	exit 0
fi
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
mkdir -p "$BIN"
start=$(date +%s)
echo "kubectl: building $K8S_VERSION into $BIN (a few minutes on 2 cores the first time)..." >&2
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$BIN/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl
mv "$BIN/kubectl.tmp" "$BIN/kubectl"
echo "kubectl: built in $(( $(date +%s) - start ))s" >&2
echo "$BIN/kubectl"
