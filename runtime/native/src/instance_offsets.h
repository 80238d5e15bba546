#pragma once
// A pass run after each InstCombine of the optimiser (program_compiler.cpp): an address
// `image + zext(base + C)` (no unsigned wrap) becomes `(image + zext(base)) + C`.
//
// A body reaches its instance as `image + this`, `this` a run-time offset. Once a callee is
// inlined its `this` is the caller's `this + C` (the member instance at C), so its accesses and
// the caller's stores to the same members (the call's inputs, written just before) have
// different bases: alias analysis still sees them overlap, but GVN forwards a stored value to a
// load only from a common base at constant distances, so every input was stored and loaded back
// (and a literal input not folded). Split, every member of every instance is at a constant
// distance from the one `image + zext(this)`.
#include <llvm/IR/PassManager.h>

namespace takt::native {

struct InstanceOffsets : llvm::PassInfoMixin<InstanceOffsets> {
    llvm::PreservedAnalyses run(llvm::Function& fn, llvm::FunctionAnalysisManager& fam);
};

} // namespace takt::native
