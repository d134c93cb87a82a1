#!/usr/bin/env bash
# Runs every Fuzz target of the module for the given time each (default 60s).
# Minimization of each new interesting input is bounded (FUZZMINIMIZE,
# default 2s; Go's default is 60s per input, which spent most of a 30s run
# minimizing instead of fuzzing: issue 17).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-60s}
min=${FUZZMINIMIZE:-2s}
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $f ($t, minimize at most $min per input)"
    go test -run='^$' -fuzz="^$f\$" -fuzztime="$t" -fuzzminimizetime="$min" "$pkg"
  done
done
