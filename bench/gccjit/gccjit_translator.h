#pragma once
// A measurement translator, not a tier: verified bytecode to machine code through libgccjit, for
// the subset of opcodes the bench programs int_arith, real_math and array_struct use, so that
// libgccjit can be compared with the native tier's LLVM ORC translator
// (runtime/native/src/translator.cpp) on the same programs. It produces the same entry
// signature and RunContext as the native tier, so both run one image the same way.
#include "takt/bytecode/module.h"
#include "takt/native/native.h"

#include <cstdint>
#include <memory>
#include <string>

namespace takt::bench::gccjit {

struct Result {
    std::unique_ptr<native::CompiledModule> code; // null: see unsupportedPc / error
    std::uint32_t unsupportedPc = bytecode::kNone;
    std::uint32_t unsupportedOp = 0;
    std::string error;
};

// Translates every POU body of `module` at -O2 (gcc_jit_context_compile), for `cpu` (GCC's
// -march name; empty: the distribution's baseline, x86-64 or armv8-a).
[[nodiscard]] Result compile(const bytecode::Module& module, const std::string& cpu);

} // namespace takt::bench::gccjit
