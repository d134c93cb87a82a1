#!/usr/bin/env bash
# fetch-openapi.sh [DIR]: saves the running real server's OpenAPI documents (the v3
# index, v3 for api/v1, apis/apps/v1, apis/coordination.k8s.io/v1, and v2 as JSON) into
# DIR (default /tmp/realserver-openapi), with a VERSION file, then writes DIR/READY.
set -euo pipefail
ENVFILE=${REALSERVER_ENV:-/tmp/realserver.env}
OUT=${1:-/tmp/realserver-openapi}
[ -f "$ENVFILE" ] || { echo "fetch-openapi.sh: $ENVFILE missing; start the server with 'make real-apiserver-start'" >&2; exit 1; }
STATE=$(sed -n 's/^STATE_DIR=//p' "$ENVFILE")
URL=$(sed -n 's/^APISERVER_URL=//p' "$ENVFILE")
VERSION=$(sed -n 's/^VERSION=//p' "$ENVFILE")
TOKEN=$(cat "$STATE/pki/admin.token")
mkdir -p "$OUT"
rm -f "$OUT/READY"
get() { # get PATH FILE
	curl -sf --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Accept: application/json' \
		"$URL$1" -o "$OUT/$2"
	echo "$1 -> $OUT/$2 ($(wc -c <"$OUT/$2") bytes)"
}
get /openapi/v3 openapi-v3-index.json
get /openapi/v3/api/v1 openapi-v3-api-v1.json
get /openapi/v3/apis/apps/v1 openapi-v3-apis-apps-v1.json
get /openapi/v3/apis/coordination.k8s.io/v1 openapi-v3-apis-coordination.k8s.io-v1.json
get /openapi/v2 openapi-v2.json
echo "$VERSION" > "$OUT/VERSION"
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/READY"
echo "fetch-openapi.sh: done, $OUT/READY written"
