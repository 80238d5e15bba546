#!/usr/bin/env bash
# The arm64 build from a fresh Debian 12 amd64 machine (docs/install.md): Debian's cross compiler
# and the :arm64 -dev packages (multiarch), a cross build in build-arm64/ with
# cmake/toolchain-aarch64-linux-gnu.cmake and the native tier's plugin takt-native.so (the target's
# LLVM from scripts/arm64-llvm.sh), then under qemu-aarch64 (qemu-user-static) the unit tests of
# the VM, the engine and the compiler, the native tier's tests against the interpreter (bench
# programs, traps, random programs; less what qemu-user cannot run, listed below), the ST
# conformance scripts through the arm64 `takt harness` on both tiers, and the demo
# through `takt validate`, `takt check` and a few seconds of `takt run` on the interpreter and on
# the native tier, then the arm64 packages takt and takt-native into dist/ (scripts/package.sh).
# Run as root or with sudo.
#   bash scripts/arm64.sh                 # everything
#   TAKT_ARM64_PACKAGE=0 bash scripts/arm64.sh   # build and qemu test run only
#   TAKT_ARM64_QUICK=1 TAKT_ARM64_PACKAGE=0 bash scripts/arm64.sh   # CI: takt, the VM tests, a
#                                         # subset of the native tier's tests, the demo
#   TAKT_ARM64_NATIVE=0 bash scripts/arm64.sh    # without the native tier
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

# The native tier needs the target's LLVM: libllvm14:arm64 and the headers of llvm-14-dev:arm64,
# unpacked beside the build directories (scripts/arm64-llvm.sh says why not installed).
native=${TAKT_ARM64_NATIVE:-1}
if [ "$native" = 1 ]; then
  # shellcheck source=scripts/arm64-llvm.sh
  source "$root/scripts/arm64-llvm.sh"
  takt_arm64_llvm "${TAKT_ARM64_LLVM_DIR:-$root/build-arm64-llvm}"
  llvm=("${takt_arm64_llvm_cmake[@]}")
else
  llvm=(-DTAKT_NATIVE=OFF)
fi
quick=${TAKT_ARM64_QUICK:-0}

toolchain=$root/cmake/toolchain-aarch64-linux-gnu.cmake
# Configured every time (seconds on an existing tree), so a tree from before the tier gets it.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
      -DTAKT_BENCH=OFF "${llvm[@]}" >/dev/null
suites=(vm engine compiler)
[ "$quick" = 1 ] && suites=(vm)
targets=(takt)
for t in "${suites[@]}"; do targets+=("takt_${t}_tests"); done
# The crash-safety test of the retain slots kills a cross-built takt mid-write (integration).
[ "$quick" = 1 ] || targets+=(takt_integration_tests)
# The native tier's tests: in CI only their own binary (takt_native_tests, the same sources as
# the NativeTier* tests of takt_exec_tests), which builds in a fraction of the time.
native_tests=takt_exec_tests
[ "$quick" = 1 ] && native_tests=takt_native_tests
[ "$native" = 1 ] && targets+=(takt_native_plugin "$native_tests")
nice -n 10 cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
file "$build/takt" | grep -q "ARM aarch64" || { echo "arm64: $build/takt is not an arm64 binary" >&2; exit 1; }
if [ "$native" = 1 ]; then
  file -L "$build/takt-native.so" | grep -q "ARM aarch64" ||
    { echo "arm64: $build/takt-native.so is missing or not an arm64 library" >&2; exit 1; }
  # The standard FBs' bitcode (clang 14 --target=aarch64-linux-gnu, CMakeLists.txt). Without it
  # the tier still runs, calling the interpreter's compiled C++ for a TON or an R_TRIG instead of
  # inlining it: the same results, only slower; say so rather than fail.
  if [ ! -f "$build/generated/natives_fb.bc" ]; then
    echo "arm64: no bitcode of the standard FBs (clang-14 missing?): the tier calls them instead" >&2
  fi
fi

# `-L /`: the multiarch libc6:arm64 loader and libc (see the toolchain file for why not the cross
# toolchain's sysroot). The tests start the takt binary through build-arm64/tests/takt-emulated,
# so no binfmt_misc is needed.
qemu=(qemu-aarch64-static -L /)
status=0
for t in "${suites[@]}"; do
  echo "arm64: takt_${t}_tests under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 900 "${qemu[@]}" "./takt_${t}_tests" --gtest_brief=1) | tail -3 || status=1
done
if [ "$quick" != 1 ]; then
  echo "arm64: RetainCrash (takt_integration_tests) under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 900 "${qemu[@]}" ./takt_integration_tests --gtest_brief=1 \
     --gtest_filter='RetainCrash.*') | tail -3 || status=1
  # The ST conformance scripts through the arm64 `takt harness` (tests/st/conformance), on the
  # interpreter and, with the tier, again with --execution native: the same expectations hold on
  # both tiers, as on amd64.
  conformance='Suite/StConformance.*'
  [ "$native" = 1 ] && conformance+=':Suite/NativeTierConformance.*'
  echo "arm64: the ST conformance scripts (takt_integration_tests, $conformance) under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 1800 "${qemu[@]}" ./takt_integration_tests --gtest_brief=1 \
     --gtest_filter="$conformance") | tail -3 || status=1
fi
if [ "$native" = 1 ]; then
  # The native tier against the interpreter, the same image after every scan: the bench programs,
  # the traps, the standard FBs, random programs (tests/support/native_diff). Not under qemu-user:
  #   NativeTierWriteExecute.*  a child process under PR_SET_MDWE or systemd's seccomp filter for
  #                             MemoryDenyWriteExecute: both would apply to qemu itself, whose
  #                             translator writes and runs its own code
  #   NativeTierTaskThreads.*   times real task threads under SCHED_FIFO (ctest's `realtime` label:
  #                             not even on amd64 beside other tests)
  exclude='NativeTierWriteExecute.*:NativeTierTaskThreads.*'
  seeds=()
  if [ "$quick" = 1 ]; then
    # CI: about three minutes under qemu. Each program compiles in 1-3 s there (LLVM itself runs
    # translated): 10 random programs of each profile instead of 40 and 60, and not every program
    # of the ST corpus.
    exclude+=:NativeTierStatus.EveryCorpusProgramCompiles
    seeds=(env TAKT_NATIVE_DIFF_SEEDS=1:10)
  fi
  echo "arm64: the native tier's tests ($native_tests, NativeTier*) under qemu-aarch64"
  (cd "$build/tests" && timeout -s KILL 1800 "${seeds[@]}" "${qemu[@]}" "./$native_tests" --gtest_brief=1 \
     --gtest_filter="*NativeTier*-$exclude") | tail -3 || status=1
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
if [ "$native" = 1 ]; then
  echo "arm64: 3 s of takt run --execution native on the demo (qemu-aarch64)"
  rm -rf "$demo/.takt"
  # The compile waited for (native_start = "wait"): in the background it would outlast 3 s of
  # qemu, and the run would end on the interpreter.
  sed -i 's|^\[runtime.control\]|[runtime]\nnative_start = "wait"\n\n[runtime.control]|' "$demo/runtime.toml"
  "${qemu[@]}" "$build/takt" run --project "$demo" --for 3s --execution native 2>&1 | tee "$demo/native.log"
  grep -q "execution: native (compiled in" "$demo/native.log" ||
    { echo "arm64: takt run --execution native did not run the demo on the native tier" >&2; exit 1; }
fi

if [ "${TAKT_ARM64_PACKAGE:-1}" = 1 ]; then
  TAKT_ARCH=arm64 TAKT_REL_BUILD_DIR=$root/build-arm64-rel bash "$root/scripts/package.sh"
fi
