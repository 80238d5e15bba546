#!/usr/bin/env bash
# The native execution tier on arm64, under qemu-aarch64 on an amd64 Debian 12 machine: a cross
# build of takt_scan_runner with the tier, then the five bench programs as the C++ twin, on the
# interpreter and on the tier, printing the check values and the ratios to the twin (qemu's
# absolute times say nothing about a board; the ratios of one run are what compares).
#
# The target's LLVM (libllvm14:arm64 and the unpacked headers of llvm-14-dev:arm64) comes from
# scripts/arm64-llvm.sh, as for scripts/arm64.sh.
# Needs the cross toolchain and :arm64 libraries of scripts/arm64.sh (run it once first).
# Environment: TAKT_ARM64_NATIVE_BUILD_DIR (default build-arm64-native/), SCANS (default 200),
# REPS (default 3, the median ratio is printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_ARM64_NATIVE_BUILD_DIR:-$root/build-arm64-native}
scans=${SCANS:-200}
reps=${REPS:-3}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64-static >/dev/null; then
  echo "arm64: no cross toolchain or qemu: run scripts/arm64.sh first" >&2
  exit 1
fi
if ! dpkg-query -W -f='${Status}' libbenchmark-dev:arm64 2>/dev/null | grep -q "install ok installed"; then
  echo "arm64: installing libbenchmark-dev:arm64" >&2
  $SUDO apt-get install -y -qq --no-install-recommends libbenchmark-dev:arm64 >/dev/null
fi
# shellcheck source=scripts/arm64-llvm.sh
source "$root/scripts/arm64-llvm.sh"
takt_arm64_llvm "${TAKT_ARM64_LLVM_DIR:-$root/build-arm64-llvm}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake" -DTAKT_TESTS=OFF -DTAKT_BENCH=ON \
        "${takt_arm64_llvm_cmake[@]}" >/dev/null
fi
nice -n 10 ninja -C "$build" -j"${JOBS:-2}" takt_scan_runner
runner=$build/bench/takt_scan_runner
file "$runner" | grep -q "ARM aarch64" || { echo "arm64: $runner is not an arm64 binary" >&2; exit 1; }

qemu=(qemu-aarch64-static -L /)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # mode program -> "ns check" (the runner prints ns/scan on stderr, check on stdout)
  local check
  check=$("${qemu[@]}" "$runner" "$1" "$root/bench/programs/$2.st" "$scans" 2>"$out/err")
  echo "$(sed -n 's/ ns\/scan$//p' "$out/err") $check"
}
echo "arm64 under qemu-aarch64, $scans scans, median of $reps runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
"${qemu[@]}" "$runner" tier "$root/bench/programs/int_arith.st" 1 2>&1 >/dev/null | sed -n 1p
printf '%-14s%16s%16s  %s\n' program 'interpreter ×' 'native tier ×' 'tier runs on'
status=0
for f in "$root"/bench/programs/*.st; do
  p=$(basename "$f" .st)
  : >"$out/st"
  : >"$out/tier"
  for _ in $(seq "$reps"); do
    read -r twin twin_check <<<"$(run native "$p")"
    read -r st st_check <<<"$(run st "$p")"
    read -r tier tier_check <<<"$(run tier "$p")"
    if [ "$st_check" != "$twin_check" ] || [ "$tier_check" != "$twin_check" ]; then
      echo "arm64: $p: check differs: twin $twin_check, interpreter $st_check, tier $tier_check" >&2
      status=1
    fi
    awk -v a="$st" -v n="$twin" 'BEGIN { print a / n }' >>"$out/st"
    awk -v a="$tier" -v n="$twin" 'BEGIN { print a / n }' >>"$out/tier"
  done
  median() { sort -g "$1" | sed -n "$(( (reps + 1) / 2 ))p"; }
  on=$("${qemu[@]}" "$runner" tier "$f" 1 2>&1 >/dev/null | sed -n 's/^execution: \(.*\), compiled in .*/\1/p')
  printf '%-14s%15.2fx%15.2fx  %s\n' "$p" "$(median "$out/st")" "$(median "$out/tier")" "$on"
done
exit $status
