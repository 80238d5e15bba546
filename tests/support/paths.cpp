#include "support/paths.h"

namespace takt::test {
const char* const kSourceDir = TAKT_SOURCE_DIR_VALUE;
const char* const kTaktBinary = TAKT_BINARY_VALUE;
const bool kUnderEmulator = TAKT_UNDER_EMULATOR_VALUE;
} // namespace takt::test
