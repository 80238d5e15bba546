#!/usr/bin/env bash
# Runs every test: builds takt (warnings are errors) and runs the unit tests, the ST corpus
# and the CLI tests through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export TAKT_BUILD_DIR=${TAKT_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh" -DTAKT_WERROR=ON
cd "$TAKT_BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" --timeout 300
