# Cross build for 64-bit ARM boards (Raspberry Pi 4/5, scripts/arm64.sh) with Debian's cross
# compiler (crossbuild-essential-arm64) and the :arm64 -dev packages installed through multiarch:
# their libraries are in /usr/lib/aarch64-linux-gnu, their headers in /usr/include.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_package and find_library look in lib/aarch64-linux-gnu (never the build machine's
# lib/x86_64-linux-gnu); programs (protoc-like tools, pkg-config) are the build machine's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# The test binaries run under qemu-user (ctest and gtest_discover_tests call it through this).
# `-L /`: the guest's loader and libc are both the multiarch libc6:arm64 ones (/lib/ld-linux-
# aarch64.so.1, /lib/aarch64-linux-gnu). With `-L /usr/aarch64-linux-gnu` the loader came from the
# cross toolchain's libc6-arm64-cross (another Debian revision) while libc.so.6 came from
# libc6:arm64; their private data disagree and pthread_create loops forever in the stack cache:
# every program that starts a thread hung.
find_program(TAKT_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(TAKT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TAKT_QEMU_AARCH64} -L /)
endif()
