#!/usr/bin/env bash
# start.sh: starts a real etcd, kube-apiserver and kube-controller-manager on loopback
# (binaries from build.sh), waits for /readyz, writes a kubeconfig and /tmp/realserver.env:
#   KUBECONFIG=<admin kubeconfig>  VERSION=<k8s version>  ETCD_ENDPOINT=<url>
#   STATE_DIR=<dir>  APISERVER_URL=<url>  BIN_DIR=<dir with the three binaries>
# Idempotent: if the recorded processes are alive and /readyz answers, it only says so.
# Stop with stop.sh.
#
# Defaults, chosen for recording a fidelity corpus:
#   - everything on 127.0.0.1, free ports picked at random; etcd starts empty (KEEP_DATA=1
#     keeps it) so that two recordings start from the same state.
#   - --etcd-compaction-interval=0: no periodic compaction (upstream default 5m), so a
#     resourceVersion expires only when asked: `$BIN_DIR/etcd compact --endpoint
#     $ETCD_ENDPOINT` compacts at the current revision the way the apiserver does (it
#     writes compact_rev_key, which the apiserver watches). Watch cache on (as upstream).
#   - --endpoint-reconciler-type=none: the lease reconciler refuses a loopback advertise
#     address; the default/kubernetes Service has no endpoints (nothing here needs them).
#   - --authorization-mode=RBAC with static tokens in system:masters; --token-auth-file.
#   - kube-controller-manager runs garbagecollector (ownerReference GC: background,
#     foreground, orphan), namespace (namespace deletion) and serviceaccount (the default
#     ServiceAccount, without which Pod creates are rejected by ServiceAccount admission),
#     with --leader-elect=false (starts at once) and --secure-port=0 (no listener).
#     Its garbage collector learns resources (a CRD created just now) from discovery every
#     30s, hardcoded upstream: GC of a new CRD's instances can lag by up to 30s.
#
# Environment:
#   REALSERVER_STATE_DIR   state (data, certs, logs, pids); default
#                          ${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver/state
#   APISERVER_EXTRA_ARGS   extra kube-apiserver flags, appended last (later flags win), e.g.
#                          "--etcd-compaction-interval=5m --watch-cache=false"
#   KCM_EXTRA_ARGS         extra kube-controller-manager flags
#   KCM_CONTROLLERS        controllers to run; default garbagecollector,namespace,serviceaccount
#   KEEP_DATA=1            keep etcd's data from the last run (default: start empty)
#   REALSERVER_ENV         where to write the env file; default /tmp/realserver.env
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=$(cat "$here/K8S_VERSION")
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver
BIN=$CACHE_ROOT/$K8S_VERSION
STATE=${REALSERVER_STATE_DIR:-$CACHE_ROOT/state}
ENVFILE=${REALSERVER_ENV:-/tmp/realserver.env}
KCM_CONTROLLERS=${KCM_CONTROLLERS:-garbagecollector,namespace,serviceaccount}

for b in etcd kube-apiserver kube-controller-manager; do
	if [ ! -x "$BIN/$b" ]; then
		echo "start.sh: $BIN/$b is missing; build it first with 'make real-apiserver'" >&2
		exit 1
	fi
done
command -v openssl >/dev/null || { echo "start.sh: openssl is needed to make certificates (apt-get install openssl)" >&2; exit 1; }
command -v curl >/dev/null || { echo "start.sh: curl is needed to wait for /readyz (apt-get install curl)" >&2; exit 1; }

# One start/stop/keepalive at a time (start.sh runs stop.sh inside its lock).
if [ -z "${REALSERVER_LOCKED:-}" ]; then
	mkdir -p "$STATE"
	exec 9>"$STATE/lock"
	flock 9
	export REALSERVER_LOCKED=1
fi
mkdir -p "$STATE"/{pki,logs,pids}
PKI=$STATE/pki

alive() { # alive NAME: the recorded process runs the expected binary
	local f=$STATE/pids/$1.pid pid
	[ -f "$f" ] || return 1
	pid=$(cat "$f")
	[ -n "$pid" ] && [ -r "/proc/$pid/exe" ] || return 1
	[ "$(readlink "/proc/$pid/exe")" = "$BIN/$1" ]
}

readyz() { # readyz URL TOKEN
	curl -sf --max-time 5 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $2" "$1/readyz" >/dev/null 2>&1
}

if [ -f "$STATE/apiserver.url" ] && alive etcd && alive kube-apiserver && alive kube-controller-manager &&
	readyz "$(cat "$STATE/apiserver.url")" "$(cat "$PKI/admin.token")" && [ -f "$ENVFILE" ]; then
	echo "start.sh: already running ($(cat "$STATE/apiserver.url")); env in $ENVFILE"
	exit 0
fi
# Something is missing or dead: stop what is left and start everything again.
"$here/stop.sh" >/dev/null 2>&1 || true

# --- certificates and tokens (made once, kept in the state dir) ---
if [ ! -f "$PKI/apiserver.crt" ]; then
	echo "start.sh: making certificates in $PKI"
	(
		cd "$PKI"
		openssl genrsa -out ca.key 2048 2>/dev/null
		openssl req -x509 -new -nodes -key ca.key -sha256 -days 3650 -subj "/CN=cachelab-realserver-ca" -out ca.crt 2>/dev/null
		openssl genrsa -out apiserver.key 2048 2>/dev/null
		openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr 2>/dev/null
		cat > apiserver.ext <<-EXT
			basicConstraints=CA:FALSE
			keyUsage=digitalSignature,keyEncipherment
			extendedKeyUsage=serverAuth
			subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
		EXT
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
			-extfile apiserver.ext -out apiserver.crt 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		rm -f apiserver.csr
	)
fi
if [ ! -f "$PKI/tokens.csv" ]; then
	admin=$(openssl rand -hex 24)
	kcm=$(openssl rand -hex 24)
	echo "$admin" > "$PKI/admin.token"
	echo "$kcm" > "$PKI/kcm.token"
	# token,user,uid,"groups": both in system:masters. The controller manager runs with
	# --use-service-account-credentials=false, so its own identity needs the rights of the
	# garbage collector (get/list/watch/patch/delete on every resource).
	{
		echo "$admin,cachelab-admin,cachelab-admin,\"system:masters\""
		echo "$kcm,system:kube-controller-manager,system:kube-controller-manager,\"system:masters\""
	} > "$PKI/tokens.csv"
fi
chmod 600 "$PKI"/*.key "$PKI"/*.token "$PKI/tokens.csv"

# --- free loopback ports ---
used=" "
freeport() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 20000))
		case "$used" in *" $p "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			used="$used$p "
			echo "$p"
			return 0
		fi
	done
	echo "start.sh: no free loopback port found" >&2
	return 1
}
isfree() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Reuse the last run's ports when they are free, so a restart keeps the same URLs (a
# process killed just now may hold its listener for a few more seconds: wait up to 10s).
lastfree() {
	[ -f "$STATE/ports" ] && read -r ETCD_PORT PEER_PORT API_PORT <"$STATE/ports" && [ -n "${API_PORT:-}" ] || return 1
	for _ in $(seq 1 20); do
		isfree "$ETCD_PORT" && isfree "$PEER_PORT" && isfree "$API_PORT" && return 0
		sleep 0.5
	done
	return 1
}
if lastfree; then
	:
else
	[ -f "$STATE/ports" ] && echo "start.sh: last ports ($(cat "$STATE/ports")) not all free; picking new ones"
	ETCD_PORT=$(freeport); used="$used$ETCD_PORT "
	PEER_PORT=$(freeport); used="$used$PEER_PORT "
	API_PORT=$(freeport); used="$used$API_PORT "
fi
echo "$ETCD_PORT $PEER_PORT $API_PORT" > "$STATE/ports"
ETCD_URL=http://127.0.0.1:$ETCD_PORT
API_URL=https://127.0.0.1:$API_PORT

if [ -z "${KEEP_DATA:-}" ]; then rm -rf "$STATE/etcd"; fi
# What this start was asked for, so that keepalive.sh restarts a crashed server alike.
printf 'APISERVER_EXTRA_ARGS=%q\nKCM_EXTRA_ARGS=%q\nKCM_CONTROLLERS=%q\n' \
	"${APISERVER_EXTRA_ARGS:-}" "${KCM_EXTRA_ARGS:-}" "$KCM_CONTROLLERS" > "$STATE/start.env"
mkdir -p "$STATE/etcd"

launch() { # launch NAME ARGS...: runs BIN/NAME in its own session, logs and pid in STATE
	local name=$1
	shift
	# Close inherited descriptors 3-9 (our lock on 9, flock(1)'s or make's jobserver's):
	# a daemon holding the lock would block every later start, stop and keepalive.
	setsid "$BIN/$name" "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	echo $! > "$STATE/pids/$name.pid"
}

fail() {
	echo "start.sh: $1; last lines of $STATE/logs/$2.log:" >&2
	tail -20 "$STATE/logs/$2.log" >&2 || true
	"$here/stop.sh" >/dev/null 2>&1 || true
	exit 1
}

echo "start.sh: etcd on $ETCD_URL"
launch etcd --data-dir "$STATE/etcd" --listen-client-url "$ETCD_URL" \
	--listen-peer-url "http://127.0.0.1:$PEER_PORT" --log-level warn
for i in $(seq 1 60); do
	curl -sf --max-time 2 "$ETCD_URL/health" >/dev/null 2>&1 && break
	alive etcd || fail "etcd exited" etcd
	[ "$i" = 60 ] && fail "etcd not healthy after 30s" etcd
	sleep 0.5
done

echo "$API_URL" > "$STATE/apiserver.url"
echo "start.sh: kube-apiserver $K8S_VERSION on $API_URL"
# shellcheck disable=SC2086 # APISERVER_EXTRA_ARGS is a list of flags
launch kube-apiserver \
	--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
	--etcd-servers="$ETCD_URL" \
	--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
	--client-ca-file="$PKI/ca.crt" --cert-dir="$STATE/pki" \
	--token-auth-file="$PKI/tokens.csv" \
	--authorization-mode=RBAC \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$PKI/sa.pub" \
	--service-account-signing-key-file="$PKI/sa.key" \
	--service-cluster-ip-range=10.0.0.0/24 \
	--endpoint-reconciler-type=none \
	--etcd-compaction-interval=0 \
	--profiling=false \
	--v=1 \
	${APISERVER_EXTRA_ARGS:-}

ADMIN_TOKEN=$(cat "$PKI/admin.token")
writekubeconfig() { # writekubeconfig FILE TOKEN USER
	cat > "$1" <<-KC
		apiVersion: v1
		kind: Config
		clusters:
		- name: realserver
		  cluster:
		    server: $API_URL
		    certificate-authority: $PKI/ca.crt
		users:
		- name: $3
		  user:
		    token: $2
		contexts:
		- name: realserver
		  context:
		    cluster: realserver
		    user: $3
		current-context: realserver
	KC
	chmod 600 "$1"
}
writekubeconfig "$STATE/admin.kubeconfig" "$ADMIN_TOKEN" cachelab-admin
writekubeconfig "$STATE/kcm.kubeconfig" "$(cat "$PKI/kcm.token")" system:kube-controller-manager

for i in $(seq 1 240); do
	readyz "$API_URL" "$ADMIN_TOKEN" && break
	alive kube-apiserver || fail "kube-apiserver exited" kube-apiserver
	[ "$i" = 240 ] && fail "kube-apiserver not ready after 120s" kube-apiserver
	sleep 0.5
done

echo "start.sh: kube-controller-manager ($KCM_CONTROLLERS)"
# shellcheck disable=SC2086 # KCM_EXTRA_ARGS is a list of flags
launch kube-controller-manager \
	--kubeconfig="$STATE/kcm.kubeconfig" \
	--controllers="$KCM_CONTROLLERS" \
	--use-service-account-credentials=false \
	--leader-elect=false \
	--secure-port=0 \
	--v=1 \
	${KCM_EXTRA_ARGS:-}
sleep 1
alive kube-controller-manager || fail "kube-controller-manager exited" kube-controller-manager

tmpenv=$ENVFILE.tmp.$$
{
	echo "KUBECONFIG=$STATE/admin.kubeconfig"
	echo "VERSION=$K8S_VERSION"
	echo "ETCD_ENDPOINT=$ETCD_URL"
	echo "STATE_DIR=$STATE"
	echo "APISERVER_URL=$API_URL"
	echo "BIN_DIR=$BIN"
} > "$tmpenv"
mv "$tmpenv" "$ENVFILE"
echo "start.sh: ready. kubectl --kubeconfig $STATE/admin.kubeconfig get ns; env in $ENVFILE"
