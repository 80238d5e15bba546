#!/usr/bin/env bash
# Usage: scripts/opcua-perf.sh [demo_load.mjs options: --items 1000,10000 --seconds 20 --pairs 2 --fifo --scan-cpu N --out FILE]
# The OPC UA figures of docs/performance.md ("OPC UA server on the demo"): builds `takt` as a
# Release build without sanitizers in ./build-rel (through ccache when installed, as every build), installs
# the locked npm packages of the server and of its tests' client, and runs
# tests/opcua/demo_load.mjs, which alternates runs of the demo without and with the OPC UA server
# and prints one JSON line per run. The machine should be otherwise quiet; each line has the load
# average beside its figures. With --scan-cpu N the scan thread is pinned to CPU N
# ([runtime.realtime] cpu_affinity, so takt runs its OPC UA server on the other CPUs at nice 10),
# and the client (demo_load.mjs) runs on the other CPUs at nice 10 as well (taskset, nice).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_REL_BUILD_DIR:-$root/build-rel}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build "$build" --target takt
bash "$root/scripts/npm-ci.sh" "$root/opcua" "$root/tests/opcua"
client=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = --scan-cpu ] && [ $((i + 1)) -lt ${#args[@]} ]; then
    scan=${args[$((i + 1))]}
    others=$(seq 0 $(($(nproc) - 1)) | grep -vx "$scan" | paste -sd, -)
    if [ -z "$others" ]; then
      echo "opcua-perf.sh: --scan-cpu $scan leaves no other CPU for the client" >&2
      exit 2
    fi
    client=(taskset -c "$others" nice -n 10)
  fi
done
cd "$root/tests/opcua"
TAKT_BIN="$build/takt" exec "${client[@]}" node demo_load.mjs "$@"
