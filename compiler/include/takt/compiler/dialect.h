#pragma once
#include <cstdint>

namespace takt::compiler {

// runtime.toml [build] dialect / `takt check --dialect` (docs/dialects.md). Codesys accepts the
// constructs real CODESYS/TwinCAT/OSCAT code relies on, each with its own W1xxx warning; Iec
// reports exactly those W1xxx codes as errors; Openplc accepts on top what matiec (the OpenPLC
// compiler) accepts and CODESYS refuses: comments that close flat at the first `*)` (lexer) and
// writing an FB instance's VAR from outside (sema), each use a warning of its own.
enum class Dialect : std::uint8_t { Codesys, Iec, Openplc };

} // namespace takt::compiler
