#!/usr/bin/env bash
# Usage: tests/opcua/debian-node18.sh DIR COMMAND...
# Runs COMMAND (the OPC UA client tests) with Debian 12's own Node.js 18, unpacked into DIR by
# scripts/debian-node18.sh, first on PATH: the `node` that `takt run` finds and starts the OPC UA
# server with is then the one a Debian 12 box gets from `apt install nodejs`. Debian's libnode
# loads modules from /usr/share/nodejs, so DIR/usr/share is laid over /usr/share in a mount
# namespace of this command's own; nothing outside it changes. That needs root.
set -euo pipefail
dir=${1:?usage: debian-node18.sh DIR COMMAND...}
shift
if [ "$(id -u)" -ne 0 ]; then
  echo "tests/opcua on Debian's Node.js 18 skipped: it needs root for a mount namespace"
  exit 0
fi
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount sh -c '
  set -e
  dir=$1
  shift
  mount -t overlay overlay -o "lowerdir=$dir/usr/share:/usr/share" /usr/share
  PATH="$dir/bin:$PATH"
  export PATH
  version=$(node -e "process.stdout.write(process.version)")
  case $version in
    v18.*) echo "node on PATH: $(command -v node) $version" ;;
    *) echo "expected Debian 12 Node.js 18 on PATH, got $version" >&2; exit 1 ;;
  esac
  exec "$@"
' sh "$dir" "$@"
