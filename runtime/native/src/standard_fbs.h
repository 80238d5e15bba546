#pragma once
// The standard FBs (TON, R_TRIG, CTU …) for the translator: their one C++ source
// (runtime/vm/src/natives_fb.cpp) linked into the program's LLVM module as bitcode, then one
// copy of an FB per distinct instance layout, with the layout as a constant (the VM's context
// stays an argument: it is the running call stack's, RunContext::fbContext).
//
// Why copies before optimisation rather than calls LLVM may inline: an FB's body optimised with
// an unknown layout gets its member stores merged behind a phi of layout pointers, which the
// later inlining no longer folds. A copy made before any pass runs sees constant member offsets
// from its first pass on, so a TON becomes the twenty-odd instructions a hand-written one is.
#include "takt/native/native.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace takt::native {

class StandardFbs {
public:
    // The bitcode is linked into `mod` at the first forInstance() when takt has it; otherwise
    // linked() stays false and the code calls the interpreter's C++ (DirectFb::fn).
    explicit StandardFbs(llvm::Module& mod);

    [[nodiscard]] bool linked() const noexcept { return linked_; }
    // The copy of `d`'s FB for its layout: void (i8* context, i8* instance). Null when not linked() or the
    // bitcode has no such FB.
    llvm::Function* forInstance(const DirectFb& d);

private:
    void link();

    llvm::Module& mod_;
    bool tried_ = false;
    bool linked_ = false;
    std::map<std::pair<std::uint32_t, std::string>, llvm::Function*> copies_; // (native, layout bytes)
};

} // namespace takt::native
