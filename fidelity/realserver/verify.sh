#!/usr/bin/env bash
# verify.sh: smoke test of a running real server (start.sh) with kubectl: namespaces, a
# ConfigMap, the Bellerophon CRD with one instance, a rejected invalid instance, and the
# garbage collector deleting a child whose owner was deleted. Leaves nothing behind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ENVFILE=${REALSERVER_ENV:-/tmp/realserver.env}
[ -f "$ENVFILE" ] || { echo "verify.sh: $ENVFILE missing; start the server with 'make real-apiserver-start'" >&2; exit 1; }
KUBECONFIG=$(sed -n 's/^KUBECONFIG=//p' "$ENVFILE")
export KUBECONFIG
k() { kubectl "$@"; }
ns=verify-$RANDOM
crd=$here/../../subjects/bellerophon/config/crd.yaml

k version
k get ns
k create namespace "$ns"
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
k -n "$ns" create configmap verify --from-literal=a=b
k -n "$ns" get configmap verify -o jsonpath='{.data.a}{"\n"}' | grep -qx b
k apply -f "$crd"
k wait --for=condition=Established --timeout=60s crd/bellerophons.lab.cachelab.dev
cat <<YAML | k -n "$ns" apply -f -
apiVersion: lab.cachelab.dev/v1alpha1
kind: Bellerophon
metadata:
  name: verify
spec:
  replicas: 1
  version: v1
YAML
k -n "$ns" get bellerophons
if out=$(cat <<YAML | k -n "$ns" apply -f - 2>&1
apiVersion: lab.cachelab.dev/v1alpha1
kind: Bellerophon
metadata:
  name: invalid
spec:
  replicas: -1
  version: ""
YAML
); then
	echo "verify.sh: the CRD accepted an invalid Bellerophon" >&2
	exit 1
fi
echo "rejected as expected: $out"

# Garbage collection (kube-controller-manager): a ConfigMap owned by the Bellerophon goes
# away after the Bellerophon is deleted.
uid=$(k -n "$ns" get bellerophon verify -o jsonpath='{.metadata.uid}')
cat <<YAML | k -n "$ns" apply -f -
apiVersion: v1
kind: ConfigMap
metadata:
  name: child
  ownerReferences:
  - apiVersion: lab.cachelab.dev/v1alpha1
    kind: Bellerophon
    name: verify
    uid: $uid
YAML
k -n "$ns" delete bellerophon verify
# The garbage collector learns new resources (a CRD created just now) by discovery every
# 30s (hardcoded in kube-controller-manager), so allow 90s.
for i in $(seq 1 180); do
	k -n "$ns" get configmap child >/dev/null 2>&1 || break
	[ "$i" = 180 ] && { echo "verify.sh: the garbage collector did not delete the child in 90s" >&2; exit 1; }
	sleep 0.5
done
echo "garbage collector deleted the child"
k delete namespace "$ns" --timeout=60s
trap - EXIT
echo "verify.sh: ok"
