#!/usr/bin/env bash
# Configures and builds takt into build/ (or $TAKT_BUILD_DIR). Extra args go to cmake.
# TAKT_TARGETS="takt ..." builds only those targets (default: everything, tests and benchmarks too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
build=${TAKT_BUILD_DIR:-$root/build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
elif [ $# -gt 0 ]; then
  cmake "$build" "$@" >/dev/null
fi
if [ -n "${TAKT_TARGETS:-}" ]; then
  read -r -a targets <<<"$TAKT_TARGETS"
  cmake --build "$build" --target "${targets[@]}"
else
  cmake --build "$build"
fi
