#!/usr/bin/env bash
# Usage: scripts/opcua-perf.sh [demo_load.mjs options: --items 1000,10000 --seconds 20 --pairs 2 --fifo --out FILE]
# The OPC UA figures of docs/performance.md ("OPC UA server on the demo"): builds `takt` as a
# Release build without sanitizers in ./build-rel (through ccache when installed, as every build), installs
# the locked npm packages of the server and of its tests' client, and runs
# tests/opcua/demo_load.mjs, which alternates runs of the demo without and with the OPC UA server
# and prints one JSON line per run. The machine should be otherwise quiet; each line has the load
# average beside its figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_REL_BUILD_DIR:-$root/build-rel}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build "$build" --target takt
bash "$root/scripts/npm-ci.sh" "$root/opcua" "$root/tests/opcua"
cd "$root/tests/opcua"
TAKT_BIN="$build/takt" exec node demo_load.mjs "$@"
