#include "standard_fbs.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <array>
#include <vector>

namespace takt::native {

#if defined(TAKT_STANDARD_FB_BITCODE)
// natives_fb.cpp as LLVM bitcode (generated/natives_fb_bitcode.cpp, cmake/takt_bitcode_embed.cmake).
extern const unsigned char kStandardFbBitcode[];
extern const std::size_t kStandardFbBitcodeSize;
#endif

namespace {

// The C names natives_fb.cpp gives the FBs, indexed by bytecode::Native (empty for functions).
constexpr std::array kFbNames = {
#define TAKT_NATIVE_Fb(name) "takt_fb_" #name,
#define TAKT_NATIVE_Fn(name) "",
#define TAKT_NATIVE(name, kind, signature) TAKT_NATIVE_##kind(name)
#include "takt/bytecode/natives.def"
#undef TAKT_NATIVE
#undef TAKT_NATIVE_Fn
#undef TAKT_NATIVE_Fb
};

// Inlines every call of a defined function in `fn` (the FB behind its C name, and what that
// calls), so no part of the FB is optimised apart from its constant layout.
void inlineCallees(llvm::Function& fn) {
    for (int round = 0; round < 4; ++round) {
        std::vector<llvm::CallBase*> calls;
        for (llvm::BasicBlock& block : fn) {
            for (llvm::Instruction& i : block) {
                auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
                const llvm::Function* callee = call != nullptr ? call->getCalledFunction() : nullptr;
                if (callee != nullptr && !callee->isDeclaration() && callee != &fn) {
                    calls.push_back(call);
                }
            }
        }
        if (calls.empty()) {
            return;
        }
        for (llvm::CallBase* call : calls) {
            llvm::InlineFunctionInfo info;
            (void)llvm::InlineFunction(*call, info);
        }
    }
}

} // namespace

StandardFbs::StandardFbs(llvm::Module& mod) : mod_(mod) {}

void StandardFbs::link() {
#if defined(TAKT_STANDARD_FB_BITCODE)
    llvm::Module& mod = mod_;
    const llvm::StringRef bytes(reinterpret_cast<const char*>(kStandardFbBitcode), kStandardFbBitcodeSize);
    auto parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "natives_fb.bc"), mod.getContext());
    if (!parsed) {
        llvm::consumeError(parsed.takeError());
        return; // the direct calls still work
    }
    std::unique_ptr<llvm::Module> fbs = std::move(*parsed);
    fbs->setDataLayout(mod.getDataLayout());
    fbs->setTargetTriple(mod.getTargetTriple());
    // Linked as they are (the linker drops unreferenced internal definitions), then made
    // internal: what no copy uses is dropped by the optimiser.
    std::vector<std::string> defined;
    for (const llvm::GlobalValue& g : fbs->global_values()) {
        if (!g.isDeclaration() && !g.hasLocalLinkage()) {
            defined.push_back(g.getName().str());
        }
    }
    if (llvm::Linker::linkModules(mod, std::move(fbs))) {
        return;
    }
    for (const std::string& name : defined) {
        if (llvm::GlobalValue* g = mod.getNamedValue(name); g != nullptr) {
            g->setLinkage(llvm::GlobalValue::InternalLinkage);
        }
    }
    linked_ = true;
#endif
}

llvm::Function* StandardFbs::forInstance(const DirectFb& d) {
    if (!tried_) {
        tried_ = true;
        link();
    }
    if (!linked_ || d.native >= kFbNames.size()) {
        return nullptr;
    }
    llvm::Function* fb = mod_.getFunction(kFbNames[d.native]);
    if (fb == nullptr || fb->isDeclaration() || fb->arg_size() != 3) {
        return nullptr;
    }
    const auto* layoutBytes = static_cast<const std::uint8_t*>(d.layout);
    const std::string key(reinterpret_cast<const char*>(layoutBytes), d.layoutBytes);
    auto& copy = copies_[{d.native, key}];
    if (copy != nullptr) {
        return copy;
    }
    llvm::LLVMContext& cx = mod_.getContext();
    llvm::Constant* init = llvm::ConstantDataArray::get(cx, llvm::ArrayRef<std::uint8_t>(layoutBytes, d.layoutBytes));
    auto* layout = new llvm::GlobalVariable(mod_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                            "takt.fb.layout");
    layout->setAlignment(llvm::Align(8));
    llvm::ValueToValueMapTy map;
    // The context stays an argument: one copy serves every call stack of the program, each with
    // the context of its own Vm (RunContext::fbContext).
    llvm::Argument* layoutArg = fb->getArg(2);
    map[layoutArg] = llvm::ConstantExpr::getBitCast(layout, layoutArg->getType());
    copy = llvm::CloneFunction(fb, map);
    copy->setName(std::string("takt.") + kFbNames[d.native]);
    copy->setLinkage(llvm::GlobalValue::InternalLinkage);
    inlineCallees(*copy);
    return copy;
}

} // namespace takt::native
