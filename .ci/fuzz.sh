#!/usr/bin/env bash
# Runs every Fuzz target of the module for the given time each (default 60s).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-60s}
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $f ($t)"
    go test -run='^$' -fuzz="^$f\$" -fuzztime="$t" "$pkg"
  done
done
