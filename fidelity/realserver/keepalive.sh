#!/usr/bin/env bash
# keepalive.sh [MINUTES]: for MINUTES (default 150), every 30s, restarts the real server
# (start.sh, same flags as its last start, KEEP_DATA=1) when a process start.sh recorded
# has died. A server stopped on purpose (stop.sh removes the PID files) stays stopped.
# Run it in the background: setsid fidelity/realserver/keepalive.sh >LOG 2>&1 &
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=$(cat "$here/K8S_VERSION")
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/cachelab/realserver
BIN=$CACHE_ROOT/$K8S_VERSION
STATE=${REALSERVER_STATE_DIR:-$CACHE_ROOT/state}
end=$(($(date +%s) + ${1:-150} * 60))
echo $$ > "$STATE/keepalive.pid"
while [ "$(date +%s)" -lt "$end" ]; do
	sleep 30
	[ "$(cat "$STATE/keepalive.pid" 2>/dev/null)" = "$$" ] || exit 0 # replaced by another keepalive
	(
		# Skip this round if start.sh or stop.sh is running.
		flock -n 9 || exit 0
		export REALSERVER_LOCKED=1
		dead=""
		for name in etcd kube-apiserver kube-controller-manager; do
			f=$STATE/pids/$name.pid
			[ -f "$f" ] || continue
			pid=$(cat "$f")
			if ! [ -r "/proc/$pid/exe" ] || [ "$(readlink "/proc/$pid/exe")" != "$BIN/$name" ]; then
				dead="$dead $name"
			fi
		done
		[ -n "$dead" ] || exit 0
		echo "$(date -u +%FT%TZ) keepalive: died:$dead; restarting"
		for name in etcd kube-apiserver kube-controller-manager; do
			[ -f "$STATE/logs/$name.log" ] && cp "$STATE/logs/$name.log" "$STATE/logs/$name.log.crashed"
		done
		set -a
		# shellcheck disable=SC1091
		[ -f "$STATE/start.env" ] && . "$STATE/start.env"
		set +a
		KEEP_DATA=1 "$here/start.sh" || echo "$(date -u +%FT%TZ) keepalive: start.sh failed"
	) 9>"$STATE/lock"
done
rm -f "$STATE/keepalive.pid"
