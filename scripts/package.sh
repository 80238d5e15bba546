#!/usr/bin/env bash
# Builds the Debian packages of takt into dist/ (docs/install.md): a stripped release build in
# build-rel/ (or $TAKT_REL_BUILD_DIR) configured for /usr with Debian's hardening flags, only the
# takt target (with the native tier's plugin where it is built), CPack (dependencies from
# dpkg-shlibdeps), then lintian, which must report no errors.
#   bash scripts/package.sh                  # dist/takt_<version>_amd64.deb, dist/takt-native_<version>_amd64.deb
#   TAKT_ARCH=arm64 bash scripts/package.sh  # the cross build (scripts/arm64.sh calls this), with
#                                            # the native tier for arm64 (scripts/arm64-llvm.sh)
#                                            # unless TAKT_ARM64_NATIVE=0
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${TAKT_ARCH:-$(dpkg --print-architecture)}
native=$(dpkg --print-architecture)
bash "$root/scripts/setup.sh"

need=(dpkg-dev lintian file)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "package: installing ${missing[*]}" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$arch" = "$native" ]; then
  build=${TAKT_REL_BUILD_DIR:-$root/build-rel}
  cross=()
  export DEB_HOST_ARCH=$arch
else
  build=${TAKT_REL_BUILD_DIR:-$root/build-$arch}
  cross=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake")
  export DEB_HOST_ARCH=$arch
  # The target's LLVM for the native tier, so the cross build has a takt-native too.
  if [ "${TAKT_ARM64_NATIVE:-1}" = 1 ]; then
    # shellcheck source=scripts/arm64-llvm.sh
    source "$root/scripts/arm64-llvm.sh"
    takt_arm64_llvm "${TAKT_ARM64_LLVM_DIR:-$root/build-arm64-llvm}"
    cross+=("${takt_arm64_llvm_cmake[@]}")
  else
    cross+=(-DTAKT_NATIVE=OFF)
  fi
fi
# Debian's flags for a package: -O2, stack protector, _FORTIFY_SOURCE, RELRO, PIE (lintian checks
# them in the binary). The file-prefix map keeps the checkout's path out of the binary.
cxxflags="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS) -ffile-prefix-map=$root=."
ldflags="$(dpkg-buildflags --get LDFLAGS) -Wl,-z,now"
# A cross build is configured every time (seconds), so a tree from before its tier gets it.
if [ ! -f "$build/build.ninja" ] || [ ${#cross[@]} -gt 0 ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr \
        -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DTAKT_TESTS=OFF -DTAKT_BENCH=OFF "${cross[@]}" >/dev/null
fi
nice -n 10 cmake --build "$build" --target takt
# The OPC UA server goes into the package with its npm packages, as locked (TaktInstall.cmake).
bash "$root/scripts/npm-ci.sh" "$root/opcua"
rm -f "$build"/cpack/takt_*.deb "$build"/cpack/takt-native_*.deb
# `cpack` installs the project (building "all" first: with tests and benchmarks off that is takt
# and its libraries, already built) into a staging tree and packs it.
(cd "$build" && nice -n 10 cpack -G DEB -B "$build/cpack" >/dev/null)
mkdir -p "$root/dist"
deb=$(ls -t "$build"/cpack/takt_*_"$arch".deb | head -1)
cp "$deb" "$root/dist/"
deb="$root/dist/$(basename "$deb")"
echo "package: $deb ($(du -h "$deb" | cut -f1); takt $(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/takt | wc -c) bytes stripped)"
dpkg-deb -f "$deb" Depends
# Errors fail the build; warnings are shown.
lintian --fail-on error --tag-display-limit 0 "$deb"
# The add-on with the native tier (not built where LLVM 14 is missing or with -DTAKT_NATIVE=OFF).
native_deb=$(ls -t "$build"/cpack/takt-native_*_"$arch".deb 2>/dev/null | head -1 || true)
if [ -n "$native_deb" ]; then
  cp "$native_deb" "$root/dist/"
  native_deb="$root/dist/$(basename "$native_deb")"
  echo "package: $native_deb ($(du -h "$native_deb" | cut -f1))"
  dpkg-deb -f "$native_deb" Depends
  # The listing is read to its end (no `grep -q`): under pipefail a grep that stops at the first
  # match gets dpkg-deb's tar killed by SIGPIPE when the plugin is not the last entry, and the
  # check failed a good package.
  dpkg-deb -c "$native_deb" | grep "/takt/takt-native\.so$" >/dev/null ||
    { echo "package: $native_deb holds no takt-native.so" >&2; exit 1; }
  dpkg-deb -f "$native_deb" Depends | grep -q "libllvm14" ||
    { echo "package: $native_deb does not depend on libllvm14" >&2; exit 1; }
  lintian --fail-on error --tag-display-limit 0 "$native_deb"
elif [ -f "$build/takt-native.so" ]; then
  echo "package: the build has takt-native.so but CPack made no takt-native package" >&2
  exit 1
else
  echo "package: no takt-native (this build has no native tier)"
fi
