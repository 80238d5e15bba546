#!/usr/bin/env bash
# The arm64 build from a fresh Debian 12 amd64 machine (docs/install.md): Debian's cross compiler
# and the :arm64 -dev packages (multiarch), a cross build in build-arm64/ with
# cmake/toolchain-aarch64-linux-gnu.cmake, then under qemu-aarch64 (qemu-user-static) the unit
# tests of the VM, the engine and the compiler (less what qemu-user cannot run, listed below) and
# the demo through `takt validate`, `takt check` and a few seconds of `takt run`, then the arm64
# package into dist/ (scripts/package.sh). Run as root or with sudo.
#   bash scripts/arm64.sh                 # everything
#   TAKT_ARM64_PACKAGE=0 bash scripts/arm64.sh   # build and qemu test run only
#   TAKT_ARM64_QUICK=1 TAKT_ARM64_PACKAGE=0 bash scripts/arm64.sh   # CI: takt, the VM tests, the demo
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_ARM64_BUILD_DIR:-$root/build-arm64}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
bash "$root/scripts/setup.sh"

# The :arm64 libraries takt links, their headers, and what runs the result here. Header-only
# libraries (Asio, Boost.Beast from libboost1.74-dev, RapidJSON, CLI11) come from setup.sh: their
# headers are the same on every architecture.
arm64_dev=(libfmt-dev libspdlog-dev libtomlplusplus-dev libssl-dev zlib1g-dev libsystemd-dev libmodbus-dev libmosquitto-dev libcpp-httplib-dev
           libprotobuf-c-dev libgpiod-dev libpugixml-dev libgtest-dev libgmock-dev)
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
suites=(vm engine compiler)
[ "${TAKT_ARM64_QUICK:-0}" = 1 ] && suites=(vm)
targets=(takt)
for t in "${suites[@]}"; do targets+=("takt_${t}_tests"); done
# The crash-safety test of the retain slots kills a cross-built takt mid-write (integration).
[ "${TAKT_ARM64_QUICK:-0}" = 1 ] || targets+=(takt_integration_tests)
nice -n 10 cmake --build "$build" --target "${targets[@]}"
file "$build/takt" | grep -q "ARM aarch64" || { echo "arm64: $build/takt is not an arm64 binary" >&2; exit 1; }

# `-L /`: the multiarch libc6:arm64 loader and libc (see the toolchain file for why not the cross
# toolchain's sysroot). The tests start the takt binary through build-arm64/tests/takt-emulated,
# so no binfmt_misc is needed.
qemu=(qemu-aarch64-static -L /)
status=0
for t in "${suites[@]}"; do
  echo "arm64: takt_${t}_tests under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 900 "${qemu[@]}" "./takt_${t}_tests" --gtest_brief=1) | tail -3 || status=1
done
if [ "${TAKT_ARM64_QUICK:-0}" != 1 ]; then
  echo "arm64: RetainCrash (takt_integration_tests) under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 900 "${qemu[@]}" ./takt_integration_tests --gtest_brief=1 \
     --gtest_filter='RetainCrash.*') | tail -3 || status=1
fi
[ "$status" = 0 ] || { echo "arm64: unit tests failed under qemu" >&2; exit 1; }

echo "arm64: takt validate, takt check and 3 s of takt run on the demo (qemu-aarch64)"
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
cp -r "$root/examples/demo/." "$demo/"
rm -rf "$demo/.takt"
sed -i "s|unix:///tmp/takt-demo.sock|unix://$demo/takt.sock|" "$demo/runtime.toml"
"${qemu[@]}" "$build/takt" validate --project "$demo"
"${qemu[@]}" "$build/takt" check --project "$demo"
"${qemu[@]}" "$build/takt" run --project "$demo" --for 3s

if [ "${TAKT_ARM64_PACKAGE:-1}" = 1 ]; then
  TAKT_ARCH=arm64 TAKT_REL_BUILD_DIR=$root/build-arm64-rel bash "$root/scripts/package.sh"
fi
