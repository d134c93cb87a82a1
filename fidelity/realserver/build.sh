#!/usr/bin/env bash
# build.sh: builds kube-apiserver, kube-controller-manager (k8s.io/kubernetes at the
# version in K8S_VERSION, as a dependency of this nested module) and etcd (./cmd/etcd)
# into ${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver/<version>/, outside the repo.
# Skips the build when the three binaries are already there (FORCE=1 rebuilds).
# Prints the build time; `build.sh --download-size` prints what the module proxy serves
# for this module's whole build list (a fresh machine downloads that much).
set -euo pipefail
cd "$(dirname "$0")"
K8S_VERSION=$(cat K8S_VERSION)
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver
BIN=$CACHE_ROOT/$K8S_VERSION
BINARIES="kube-apiserver kube-controller-manager etcd"

if [ "${1:-}" = "--download-size" ]; then
	go mod download -json all | sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p' | xargs du -cb | tail -1 |
		awk '{printf "module zips for the build list: %.0f MiB\n", $1/1048576}'
	exit 0
fi

missing=""
for b in $BINARIES; do [ -x "$BIN/$b" ] || missing="$missing $b"; done
if [ -z "$missing" ] && [ -z "${FORCE:-}" ]; then
	echo "real-apiserver: $K8S_VERSION binaries already in $BIN (FORCE=1 rebuilds)"
	exit 0
fi

if ! grep -q "^	k8s.io/kubernetes $K8S_VERSION" go.mod && ! grep -q "^require k8s.io/kubernetes $K8S_VERSION" go.mod; then
	echo "real-apiserver: go.mod does not require k8s.io/kubernetes $K8S_VERSION; run ./gen-gomod.sh $K8S_VERSION" >&2
	exit 1
fi

# Version stamps as kubernetes's hack/lib/version.sh sets them, so /version and the
# compatibility-version machinery see the real release instead of v0.0.0-master.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done

tmp=$CACHE_ROOT/.build-$K8S_VERSION.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo "real-apiserver: building $K8S_VERSION ($BINARIES) into $BIN; several minutes on 2 cores..."
start=$(date +%s)
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager \
	./cmd/etcd
mkdir -p "$BIN"
for b in $BINARIES; do mv "$tmp/$b" "$BIN/$b"; done
end=$(date +%s)
echo "real-apiserver: built in $((end - start))s:"
ls -l "$BIN"
