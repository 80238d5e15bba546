#!/usr/bin/env bash
# Usage: scripts/npm-ci.sh DIR...
# `npm ci` in each DIR, exactly as its package-lock.json says, only when the lock changed since
# that folder's last install (node_modules/.lock-installed is the lock it was installed from).
set -euo pipefail
for npm_dir in "$@"; do
  if [ ! -f "$npm_dir/node_modules/.package-lock.json" ] || ! cmp -s "$npm_dir/package-lock.json" "$npm_dir/node_modules/.lock-installed"; then
    (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.lock-installed)
  fi
done
