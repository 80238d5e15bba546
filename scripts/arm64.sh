#!/usr/bin/env bash
# The arm64 build from a fresh Debian 12 amd64 machine (docs/install.md): Debian's cross compiler
# and the :arm64 -dev packages (multiarch), a cross build in build-arm64/ with
# cmake/toolchain-aarch64-linux-gnu.cmake, then under qemu-aarch64 (qemu-user-static) the unit
# tests of the VM, the engine and the compiler (less what qemu-user cannot run, listed below) and
# the demo through `takt validate` and `takt check`, then the arm64 package into dist/
# (scripts/package.sh). `takt run` hangs under qemu-user 7.2 (see below): the demo's run is for a
# real board. Run as root or with sudo.
#   bash scripts/arm64.sh                 # everything
#   TAKT_ARM64_PACKAGE=0 bash scripts/arm64.sh   # build and qemu test run only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_ARM64_BUILD_DIR:-$root/build-arm64}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
bash "$root/scripts/setup.sh"

# The :arm64 libraries takt links, their headers, and what runs the result here.
arm64_dev=(libfmt-dev libspdlog-dev libtomlplusplus-dev libssl-dev zlib1g-dev libsystemd-dev libmodbus-dev libmosquitto-dev
           libgpiod-dev libgtest-dev libgmock-dev)
host=(crossbuild-essential-arm64 qemu-user-static dpkg-dev)
missing=()
for p in "${host[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
for p in "${arm64_dev[@]}"; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing+=("$p:arm64")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "arm64: installing ${missing[*]}" >&2
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

toolchain=$root/cmake/toolchain-aarch64-linux-gnu.cmake
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
        -DTAKT_BENCH=OFF >/dev/null
fi
nice -n 10 cmake --build "$build" --target takt takt_vm_tests takt_engine_tests takt_compiler_tests
file "$build/takt" | grep -q "ARM aarch64" || { echo "arm64: $build/takt is not an arm64 binary" >&2; exit 1; }

qemu=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
# What qemu-aarch64 7.2 (Debian 12, user mode) cannot run, left for a real arm64 board:
# - *Cli.* and RetainCrash.* start the takt binary as a child: without binfmt_misc (containers)
#   the kernel cannot exec an arm64 binary;
# - a guest thread that waits for another guest thread (the VM's abort flag polled in a loop,
#   the retain writer, the scan loop and its queues) never wakes up under qemu-user here, so
#   those tests, and `takt run` itself, hang instead of failing.
declare -A skip=(
  [vm]='*AbortFlagStopsWhileTrueFromAnotherThread*'
  [engine]='RetainWriter.*:RetainCrash.*:RetainWarmStart.*:ScanCommand.*:ScanLoop.*:ScanNoAllocation.*:SpscQueue.*'
  [compiler]='*Cli.*'
)
status=0
for t in vm engine compiler; do
  echo "arm64: takt_${t}_tests under qemu-aarch64 (skipping ${skip[$t]})"
  (cd "$build/tests" && timeout -s KILL 900 "${qemu[@]}" "./takt_${t}_tests" --gtest_brief=1 \
     "--gtest_filter=-${skip[$t]}") | tail -3 || status=1
done
[ "$status" = 0 ] || { echo "arm64: unit tests failed under qemu" >&2; exit 1; }

echo "arm64: takt validate and takt check on the demo (qemu-aarch64)"
"${qemu[@]}" "$build/takt" validate --project "$root/examples/demo"
"${qemu[@]}" "$build/takt" check --project "$root/examples/demo"

if [ "${TAKT_ARM64_PACKAGE:-1}" = 1 ]; then
  TAKT_ARCH=arm64 TAKT_REL_BUILD_DIR=$root/build-arm64-rel bash "$root/scripts/package.sh"
fi
