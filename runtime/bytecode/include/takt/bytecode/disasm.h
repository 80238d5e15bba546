#pragma once
// A readable listing of a Module, generated from the opcode tables (opcodes.h), for
// `takt disasm program.stbc` and the compiler's golden tests:
//
//   pou 1 Main PROGRAM  code [0x0000, 0x0012)  frame 16  instance Main (12 bytes)
//     ; src/main.st:4:5
//     0000  MOVI_32      this+0 <Main.count>, 1
//     0003  JMP_F        fp+4, L000c
//   L000c:
//     000c  RET
//
// Data operands read g:0x10 (absolute), this+8 (instance) or fp+4 (frame), followed by the
// variable path in <> when the offset is a known variable; jump targets are labels; POU and
// native operands are named; source positions come from the debug map.
#include <cstdint>
#include <string>

#include "takt/bytecode/module.h"

namespace takt::bytecode {

struct DisasmOptions {
    bool summary = true;       // image sizes, tasks, program instances, I/O and VAR_ACCESS before the code
    bool sourceLines = true;   // "; file:line:col" comments from the debug map
    bool variablePaths = true; // "<path>" after data operands
};

// The whole module. Robust against unverified input: an undecodable word is printed as data.
[[nodiscard]] std::string disassemble(const Module& module, const DisasmOptions& options = {});

// One POU (header and code) — what golden tests compare.
[[nodiscard]] std::string disassemblePou(const Module& module, std::uint32_t pou, const DisasmOptions& options = {});

} // namespace takt::bytecode
