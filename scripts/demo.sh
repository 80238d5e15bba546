#!/usr/bin/env bash
# The main job: builds takt (installing what it needs) and runs the demo bottle-filling line on
# the simulated plant. With no arguments it runs for 60 s; pass your own, e.g. `--for 10m`, or
# run `build/takt run --project examples/demo` to run until Ctrl-C.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Only the takt binary: the tests and benchmarks are most of a full build and the demo needs none.
TAKT_TARGETS=takt bash "$root/scripts/build.sh" >/dev/null
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--for 60s)
exec "${TAKT_BUILD_DIR:-$root/build}/takt" run --project "$root/examples/demo" "${args[@]}"
