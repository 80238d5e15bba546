#!/usr/bin/env bash
# Runs every test: builds takt with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (warnings are errors; the libraries also carry libFuzzer coverage so CI fuzzes the same build)
# and runs the unit, corpus, CLI and integration tests through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
# The npm packages of the language-server and grammar tests (tests/lsp), of the browser tests
# (tests/web), of the debug adapter tests (tests/dap), of the VS Code extension (whose .vsix the
# tests package with @vscode/vsce), of the OPC UA server `takt run` starts (opcua/, node-opcua) and
# of its tests' client (tests/opcua, node-opcua-client) and of the Sparkplug host application the
# edge node's tests use (tests/sparkplug: mqtt, sparkplug-payload), exactly as locked; only when a lock
# changed since the last install.
bash "$root/scripts/npm-ci.sh" "$root/tests/lsp" "$root/tests/web" "$root/tests/dap" "$root/editors/vscode" "$root/opcua" \
  "$root/tests/opcua" "$root/tests/sparkplug"
build=${TAKT_TEST_BUILD_DIR:-$root/build-test}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTAKT_FUZZ=ON -DTAKT_WERROR=ON -DTAKT_BENCH=OFF >/dev/null
fi
cmake --build "$build"
cd "$build"
# intercept_tls_get_addr=0: the leak checker of Debian's clang 14 takes some dynamic TLS blocks
# of a dlopen'd library (the native tier's plugin) for glibc 2.19's and crashes scanning them at
# exit ("Tracer caught signal 11", google/sanitizers#1322), depending only on where the block
# lands. Without the interception it does not scan dynamic TLS; nothing of takt lives there.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:intercept_tls_get_addr=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  ctest --output-on-failure -j"$(nproc)" --timeout 600
