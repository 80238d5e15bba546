#pragma once
// The load-time verifier: a Module runs only after verify() accepted it. The interpreter does
// no checks beyond what the language demands (ARCHITECTURE.md), so everything a static check
// can establish is established here, once:
//
//   - tables: image sizes, type/POU/native/task indices, variable, I/O and VAR_ACCESS extents,
//     program instances inside the globals, debug entries sorted and pointing at known files;
//   - code: every POU's range decodes into whole instructions of known opcodes, ends with an
//     instruction that does not fall through (RET, JMP, TRAP), and every jump lands on an
//     instruction boundary of the same POU;
//   - data operands (opcodes.h address words) lie inside their space:
//       absolute  [0, constSize + globalSize), and never a write into the constants
//       this      [0, size of the POU's instance type)
//       frame     [0, the POU's frameSize)
//     with the access width from the operand format in opcodes.def; a width-0 operand's extent
//     is the callee's instance (instructions with a POU operand), the native's argument block
//     (instructions with a native operand: 8 bytes per slot, arity from natives.def) or the
//     first count operand (COPY, ZERO, strings, IDX); the array operand of a fused element
//     access (LDX_*, STX_*) covers every element the bounds check admits: (c2 - 1) * c1 bytes
//     plus the access width (c1 for LDX_N/STX_N), so the VM checks only the index;
//   - frames: each POU's frame fits the stack.
// What depends on run-time values (references, array indices, call depth) is the VM's check.
//
// The per-operand checks come from kOpcodeInfo (opcodes.h), i.e. from opcodes.def: a new
// instruction is verified without touching this file unless it brings a new operand letter.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "takt/bytecode/container.h"
#include "takt/bytecode/module.h"

namespace takt::bytecode {

enum class VerifyError : std::uint8_t {
    None,
    ImageLayout,     // initImage size, image larger than the 30-bit address space
    TypeTable,       // a type refers to a missing type/POU or a field leaves its type
    PouTable,        // POU code range, instance type, native index, frame larger than the stack
    UnknownOpcode,   // an opcode word that opcodes.def does not define
    TruncatedInstr,  // an instruction's operands run past the end of its POU
    FallsThrough,    // the last instruction of a POU could continue past its end
    JumpTarget,      // jump target outside the POU or not on an instruction boundary
    OperandTag,      // address word with the reserved tag, or `this` in a POU without instance
    OperandRange,    // data operand outside its space
    ConstantWrite,   // destination in the read-only constants
    PouIndex,        // p operand out of range or unsuitable for the instruction
    NativeIndex,     // n operand out of range or not a native function
    Immediate,       // an immediate with a closed set of values (MATH_* selector) out of range
    InitCode,        // initCode is not the entry of a function-like POU
    ProgramInstance, // program instance: POU, offset or task out of range
    TaskTable,       // SINGLE input outside the globals
    VariableTable,   // symbol table entry outside the image or with a bad type
    IoTable,         // I/O binding outside the image or with a bad type
    AccessTable,     // VAR_ACCESS entry outside the image or with a bad type
    DebugTable,      // debug map unsorted, outside the code or naming an unknown file
};

struct VerifyResult {
    VerifyError code = VerifyError::None;
    std::string message; // names the POU, code offset and operand when there is one

    [[nodiscard]] bool ok() const { return code == VerifyError::None; }
};

[[nodiscard]] VerifyResult verify(const Module& module);

// program.stbc bytes decoded and verified: the one way bytes become a Module that may run
// (`takt run`, `takt validate`, `takt disasm`, bytecode.reload and the compiler's own output).
struct VerifiedProgram {
    enum class Stage : std::uint8_t { Ok, Decode, Verify }; // where the bytes were refused
    Stage stage = Stage::Ok;
    std::shared_ptr<const Module> module; // set only when stage is Ok
    ProgramHash hash{};
    std::string error; // the container's or the verifier's message

    [[nodiscard]] bool ok() const { return stage == Stage::Ok; }
    [[nodiscard]] std::string hashHex() const { return bytecode::hashHex(hash); }
};

[[nodiscard]] VerifiedProgram loadVerified(std::span<const std::uint8_t> bytes);
// An unreadable file is refused at the Decode stage, like a malformed one.
[[nodiscard]] VerifiedProgram loadVerifiedFile(const std::filesystem::path& path);

// Number of 8-byte argument slots (result included) of a native function, from natives.def.
[[nodiscard]] std::uint32_t nativeSlotCount(std::uint32_t native) noexcept;

} // namespace takt::bytecode
