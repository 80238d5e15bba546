#pragma once
// Between the translator (translator.cpp: one POU body to the IR of one function) and the program
// compiler (program_compiler.cpp: a module per POU, the code cache, the JIT): which instructions
// a body reaches, and the translation of one body with what it refers to outside its function.
#include "takt/native/native.h"

#include "standard_fbs.h"

#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace takt::native {

// The instructions reachable from `entry` (true at their first word), or the first one that is
// not translated (unsupported).
struct Reach {
    std::vector<bool> starts;
    std::uint32_t unsupportedPc = bytecode::kNone;
};
// `refused`: opcodes treated as not translated; a call of a standard FB needs its DirectFb.
[[nodiscard]] Reach reachable(const bytecode::Module& module, std::uint32_t entry,
                              std::span<const bytecode::Opcode> refused, std::span<const DirectFb> directFbs);

// native::RunContext as the generated code sees it (the field order of native.h).
[[nodiscard]] llvm::StructType* runContextType(llvm::LLVMContext& cx);

// What a POU body's translation refers to outside its function, in the module it is put in.
struct PouLinks {
    const bytecode::Module& module;
    // The function of POU q's body in the module, null when q has none.
    std::function<llvm::Function*(std::uint32_t)> bodyOf;
    llvm::GlobalVariable* bodyTable = nullptr;  // [N x i8*]: each POU's body, for dispatch
    llvm::GlobalVariable* frameTable = nullptr; // [N x i32]: each POU's frame size
    llvm::GlobalVariable* pcBase = nullptr;     // i32: the code offset of the POU's start
    std::span<const DirectFb> directFbs;        // per POU, may be empty
    StandardFbs* standardFbs = nullptr;
    // A PROGRAM body the engine runs and nothing calls: its instance and frame are apart
    // (VmRunner checks both), which the body's alias scopes tell LLVM.
    bool runByEngine = false;
};

// Translates POU `pou`'s body (reach: reachable() from its entry, nothing unsupported) into
// `fn`, a declaration of the body's type in `links`' module.
void translatePou(llvm::Function& fn, std::uint32_t pou, const Reach& reach, const PouLinks& links);

} // namespace takt::native
