#!/usr/bin/env bash
# update-codegen.sh regenerates the Bellerophon API's DeepCopy methods
# (apis/lab/v1alpha1/zz_generated.deepcopy.go) with deepcopy-gen from
# k8s.io/code-generator, pinned to the client-go version of go.mod.
# Run it from anywhere after changing apis/lab/v1alpha1/types.go:
#   subjects/bellerophon/hack/update-codegen.sh
# With VERIFY=1 it only checks that the committed file is up to date.
set -o errexit
set -o nounset
set -o pipefail

CODEGEN_VERSION=${CODEGEN_VERSION:-v0.37.2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "${HERE}/../../.." && pwd -P)
PKG=github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1
OUT=zz_generated.deepcopy.go
DIR="${ROOT}/subjects/bellerophon/apis/lab/v1alpha1"

cd "${ROOT}"
if [[ "${VERIFY:-}" == "1" ]]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "${tmp}"' EXIT
    cp "${DIR}/${OUT}" "${tmp}/committed.go"
fi
go run "k8s.io/code-generator/cmd/deepcopy-gen@${CODEGEN_VERSION}" \
    --go-header-file "${HERE}/boilerplate.go.txt" \
    --output-file "${OUT}" \
    "${PKG}"
if [[ "${VERIFY:-}" == "1" ]]; then
    if ! diff -u "${tmp}/committed.go" "${DIR}/${OUT}"; then
        cp "${tmp}/committed.go" "${DIR}/${OUT}"
        echo "zz_generated.deepcopy.go is out of date: run subjects/bellerophon/hack/update-codegen.sh" >&2
        exit 1
    fi
fi
