# shellcheck shell=bash
# The target's LLVM for an arm64 cross build with the native tier, on an amd64 Debian 12 machine.
# Sourced by scripts/arm64.sh, scripts/arm64-native-bench.sh and scripts/package.sh:
#   source scripts/arm64-llvm.sh
#   takt_arm64_llvm "$dir"   # sets takt_arm64_llvm_cmake=(-DTAKT_LLVM_INCLUDE=... -DTAKT_LIBLLVM=...)
#
# libllvm14:arm64 installs beside the amd64 llvm-14-dev (multiarch), but llvm-14-dev:arm64 cannot
# (it would replace llvm-14 and python3 with their arm64 builds), so its headers are unpacked from
# the .deb of the same version as the installed libllvm14:arm64 into $dir (once; every arm64
# build directory shares them). Of those headers only llvm/Config/llvm-config.h differs from
# amd64's (the native target macros and triples). The standard FBs' bitcode is made by the build
# machine's clang 14 with --target=aarch64-linux-gnu (CMakeLists.txt), which finds the C++
# headers of the cross compiler (crossbuild-essential-arm64).
takt_arm64_llvm() {
  local dir=$1 sudo="" version config
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  local lib=/usr/lib/aarch64-linux-gnu/libLLVM-14.so.1
  if ! dpkg-query -W -f='${Status}' libllvm14:arm64 2>/dev/null | grep -q "install ok installed"; then
    echo "arm64: installing libllvm14:arm64" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libllvm14:arm64 >/dev/null ||
      { $sudo apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libllvm14:arm64 >/dev/null; }
  fi
  version=$(dpkg-query -W -f='${Version}' libllvm14:arm64)
  config=$dir/usr/lib/llvm-14/include/llvm/Config/llvm-config.h
  if [ ! -f "$dir/version" ] || [ "$(cat "$dir/version")" != "$version" ] || [ ! -f "$config" ]; then
    echo "arm64: unpacking the headers of llvm-14-dev:arm64 $version into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    # apt-get download writes into the current directory; its stderr holds only the note that
    # root downloads unsandboxed. A failure is retried once after refreshing the package lists.
    (cd "$dir" && { apt-get download -qq "llvm-14-dev:arm64=$version" 2>/dev/null ||
                    { $sudo apt-get update -qq && apt-get download -qq "llvm-14-dev:arm64=$version"; }; })
    dpkg-deb -x "$dir"/llvm-14-dev_*_arm64.deb "$dir"
    rm -f "$dir"/llvm-14-dev_*_arm64.deb
    echo "$version" >"$dir/version"
  fi
  grep -q 'LLVM_NATIVE_ARCH AArch64' "$config" ||
    { echo "arm64: $config is not the arm64 LLVM's" >&2; return 1; }
  [ -f "$lib" ] || { echo "arm64: $lib is missing" >&2; return 1; }
  # shellcheck disable=SC2034 # read by the scripts that source this one
  takt_arm64_llvm_cmake=(-DTAKT_LLVM_INCLUDE="$dir/usr/lib/llvm-14/include" -DTAKT_LIBLLVM="$lib")
}
