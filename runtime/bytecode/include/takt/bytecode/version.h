#pragma once
// takt_bytecode: the program.stbc container format shared by compiler and VM.
#include <cstdint>

namespace takt::bytecode {
// The program.stbc format version (container.h). Bump it on any change to the byte layout or to
// the meaning of an instruction; the loader rejects files of any other version.
inline constexpr std::uint32_t kFormatVersion = 11;
const char* layerName() noexcept;
} // namespace takt::bytecode
