#!/usr/bin/env bash
# stop.sh: stops the processes start.sh recorded (by PID, after checking each PID still
# runs the binary it started), in reverse order, and removes the env file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=$(cat "$here/K8S_VERSION")
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver
BIN=$CACHE_ROOT/$K8S_VERSION
STATE=${REALSERVER_STATE_DIR:-$CACHE_ROOT/state}
ENVFILE=${REALSERVER_ENV:-/tmp/realserver.env}

# One start/stop/keepalive at a time (start.sh runs stop.sh inside its lock).
if [ -z "${REALSERVER_LOCKED:-}" ]; then
	mkdir -p "$STATE"
	exec 9>"$STATE/lock"
	flock 9
	export REALSERVER_LOCKED=1
fi
rm -f "$ENVFILE"
# Read every PID and remove the PID files first: from here on the server counts as
# stopped on purpose (keepalive.sh restarts only processes that have a PID file).
declare -A pids
for name in kube-controller-manager kube-apiserver etcd; do
	f=$STATE/pids/$name.pid
	[ -f "$f" ] && pids[$name]=$(cat "$f")
	rm -f "$f"
done
stopped=""
for name in kube-controller-manager kube-apiserver etcd; do
	pid=${pids[$name]:-}
	if [ -n "$pid" ] && [ -r "/proc/$pid/exe" ] && [ "$(readlink "/proc/$pid/exe")" = "$BIN/$name" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		# Gone, or a zombie (whose exe link is unreadable): its sockets are closed.
		for _ in $(seq 1 40); do
			readlink "/proc/$pid/exe" >/dev/null 2>&1 || break
			sleep 0.25
		done
		if readlink "/proc/$pid/exe" >/dev/null 2>&1; then
			kill -KILL "$pid" 2>/dev/null || true
			for _ in $(seq 1 40); do
				readlink "/proc/$pid/exe" >/dev/null 2>&1 || break
				sleep 0.25
			done
		fi
		stopped="$stopped $name($pid)"
	fi
done
echo "stop.sh: stopped${stopped:- nothing}"
