#!/usr/bin/env bash
# The main job. Until the runtime lands this checks the demo project with the ST front end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh" >/dev/null
exec "${TAKT_BUILD_DIR:-$root/build}/takt" check --project "$root/examples/demo" "$@"
