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

rm -f "$ENVFILE"
stopped=""
for name in kube-controller-manager kube-apiserver etcd; do
	f=$STATE/pids/$name.pid
	[ -f "$f" ] || continue
	pid=$(cat "$f")
	if [ -n "$pid" ] && [ -r "/proc/$pid/exe" ] && [ "$(readlink "/proc/$pid/exe")" = "$BIN/$name" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 40); do
			[ -d "/proc/$pid" ] || break
			sleep 0.25
		done
		if [ -d "/proc/$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
		stopped="$stopped $name($pid)"
	fi
	rm -f "$f"
done
echo "stop.sh: stopped${stopped:- nothing}"
