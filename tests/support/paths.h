#pragma once
// Where the checkout and the `takt` binary under test are. Defined in paths.cpp, the only test
// source compiled with the absolute paths, so every other test object is the same in any
// checkout and the compiler cache can share it between clones.
namespace takt::test {
extern const char* const kSourceDir;
extern const char* const kTaktBinary;
// The tests run under an emulator (a cross build under qemu-user): child processes start and
// run an order of magnitude slower, which tests with a timing window widen it for.
extern const bool kUnderEmulator;
} // namespace takt::test

#define TAKT_SOURCE_DIR (::takt::test::kSourceDir)
#define TAKT_BINARY (::takt::test::kTaktBinary)
