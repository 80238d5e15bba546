#!/usr/bin/env bash
# Runs every test: builds takt with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (warnings are errors; the libraries also carry libFuzzer coverage so CI fuzzes the same build)
# and runs the unit, corpus, CLI and integration tests through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
build=${TAKT_TEST_BUILD_DIR:-$root/build-test}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTAKT_FUZZ=ON -DTAKT_WERROR=ON -DTAKT_BENCH=OFF >/dev/null
fi
cmake --build "$build"
cd "$build"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  ctest --output-on-failure -j"$(nproc)" --timeout 600
