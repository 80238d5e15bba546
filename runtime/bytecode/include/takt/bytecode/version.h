#pragma once
// takt_bytecode: the program.stbc container format shared by compiler and VM.
// Not implemented yet: only the format version lives here until the bytecode issue lands.
#include <cstdint>

namespace takt::bytecode {
inline constexpr std::uint32_t kFormatVersion = 0; // 0 = no format defined yet
const char* layerName() noexcept;
} // namespace takt::bytecode
