#include "wave_linker.h"

#include "code_memory.h"
#include "pou_translator.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <utility>

namespace takt::native {

namespace {

std::string errorText(llvm::Error err) {
    return llvm::toString(std::move(err));
}

// The code of the POUs linked so far, without the JIT that linked it: the waves' arenas.
class JitModule final : public CompiledModule {
public:
    JitModule(std::vector<std::shared_ptr<CodeArena>> code, std::vector<Entry> entries)
        : code_(std::move(code)), entries_(std::move(entries)) {}
    [[nodiscard]] Entry entry(std::uint32_t pou) const noexcept override {
        return pou < entries_.size() ? entries_[pou] : nullptr;
    }

private:
    std::vector<std::shared_ptr<CodeArena>> code_; // the code the entries point into
    std::vector<Entry> entries_;
};

// What depends on where the POUs lie, compiled by the JIT into each wave: each body's code offset
// (its traps' pcs) and, with `tables` (the last wave), the dispatch tables (each POU's body, null
// without one, and frame size).
llvm::orc::ThreadSafeModule programModule(const bytecode::Module& module, const std::vector<std::string>& names,
                                          const std::vector<bool>& hasBody, bool tables, llvm::TargetMachine& tm) {
    auto cx = std::make_unique<llvm::LLVMContext>();
    auto mod = std::make_unique<llvm::Module>("takt.program", *cx);
    mod->setDataLayout(tm.createDataLayout());
    mod->setTargetTriple(tm.getTargetTriple().str());
    llvm::IRBuilder<> builder(*cx);
    llvm::Type* i8p = builder.getInt8PtrTy();
    std::vector<llvm::Constant*> bodyPtrs;
    std::vector<llvm::Constant*> frameSizes;
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        llvm::Constant* body = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(i8p));
        if (hasBody[p]) {
            new llvm::GlobalVariable(*mod, builder.getInt32Ty(), true, llvm::GlobalValue::ExternalLinkage,
                                     builder.getInt32(module.pous[p].code), startSymbol(names, p));
            if (tables) {
                llvm::Function* fn = llvm::Function::Create(bodyType(*cx), llvm::Function::ExternalLinkage,
                                                            bodySymbol(names, p), mod.get());
                body = llvm::ConstantExpr::getBitCast(fn, i8p);
            }
        }
        bodyPtrs.push_back(body);
        frameSizes.push_back(builder.getInt32(module.pous[p].frameSize));
    }
    if (tables) {
        auto* bodyArray = llvm::ArrayType::get(i8p, bodyPtrs.size());
        new llvm::GlobalVariable(*mod, bodyArray, true, llvm::GlobalValue::ExternalLinkage,
                                 llvm::ConstantArray::get(bodyArray, bodyPtrs), kBodyTable);
        auto* frameArray = llvm::ArrayType::get(builder.getInt32Ty(), frameSizes.size());
        new llvm::GlobalVariable(*mod, frameArray, true, llvm::GlobalValue::ExternalLinkage,
                                 llvm::ConstantArray::get(frameArray, frameSizes), kFrameTable);
    }
    return {std::move(mod), std::move(cx)};
}

} // namespace

std::string bodySymbol(const std::vector<std::string>& names, std::uint32_t p) {
    return "takt.body." + names[p];
}
std::string startSymbol(const std::vector<std::string>& names, std::uint32_t p) {
    return "takt.start." + names[p];
}

llvm::FunctionType* bodyType(llvm::LLVMContext& cx) {
    llvm::Type* i8p = llvm::Type::getInt8PtrTy(cx);
    llvm::Type* i32 = llvm::Type::getInt32Ty(cx);
    return llvm::FunctionType::get(i32, {i8p, i32, i32, runContextType(cx)->getPointerTo(), i32}, false);
}

WaveLinker::WaveLinker(const bytecode::Module& module, const std::vector<std::string>& names,
                       const std::vector<bool>& hasBody)
    : module_(module), names_(names), hasBody_(hasBody), entries_(module.pous.size(), nullptr) {}

WaveLinker::~WaveLinker() = default;

bool WaveLinker::fail(std::string why) {
    error_ = std::move(why);
    return false;
}

bool WaveLinker::start(llvm::orc::JITTargetMachineBuilder tmb) {
    auto jit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(std::move(tmb))
                   .setObjectLinkingLayerCreator([this](llvm::orc::ExecutionSession& session, const llvm::Triple&) {
                       return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                           session, [this] { return std::make_unique<CodeMemory>(arena_); });
                   })
                   .create();
    if (!jit) {
        return fail(errorText(jit.takeError()));
    }
    jit_ = std::move(*jit);
    // The process's symbols (the math library, the host calls) for every wave: the main JITDylib
    // holds nothing else.
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
    if (!generator) {
        return fail(errorText(generator.takeError()));
    }
    jit_->getMainJITDylib().addGenerator(std::move(*generator));
    return true;
}

bool WaveLinker::link(std::span<const std::uint32_t> pous, std::span<const ObjectFile> objects, bool last,
                      llvm::TargetMachine& tm) {
    std::size_t objectBytes = 0;
    for (const ObjectFile& object : objects) {
        objectBytes += object->object.size();
    }
    arena_ = std::make_shared<CodeArena>(objectBytes, objects.size());
    if (!arena_->error().empty()) {
        return fail(arena_->error());
    }
    auto wave = jit_->createJITDylib("takt.wave." + std::to_string(waves_.size()));
    if (!wave) {
        return fail(errorText(wave.takeError()));
    }
    // The wave's own symbols first, then the waves before it (newest first: a POU is in one), then
    // the process's.
    llvm::orc::JITDylibSearchOrder order;
    for (auto it = waves_.rbegin(); it != waves_.rend(); ++it) {
        order.emplace_back(*it, llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly);
    }
    order.emplace_back(&jit_->getMainJITDylib(), llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly);
    wave->setLinkOrder(std::move(order));
    waves_.push_back(&*wave);
    objects_.insert(objects_.end(), objects.begin(), objects.end());
    for (std::size_t i = 0; i < objects.size(); ++i) {
        auto buffer = llvm::MemoryBuffer::getMemBuffer(objects[i]->object, names_[pous[i]], false);
        if (llvm::Error err = jit_->addObjectFile(*wave, std::move(buffer))) {
            return fail(errorText(std::move(err)));
        }
    }
    if (llvm::Error err = jit_->addIRModule(*wave, programModule(module_, names_, hasBody_, last, tm))) {
        return fail(errorText(std::move(err)));
    }
    std::vector<Entry> linked(entries_);
    for (const std::uint32_t p : pous) {
        auto sym = jit_->lookup(*wave, bodySymbol(names_, p));
        if (!sym) {
            return fail(errorText(sym.takeError()));
        }
        linked[p] = reinterpret_cast<Entry>(static_cast<std::uintptr_t>(sym->getAddress()));
    }
    // Every object the entries need is linked (a lookup links what it reaches): the wave's code
    // becomes executable now, before anything runs it.
    if (!arena_->seal()) {
        return fail(arena_->error());
    }
    arenas_.push_back(arena_);
    entries_ = std::move(linked);
    return true;
}

std::unique_ptr<CompiledModule> WaveLinker::code() const {
    return std::make_unique<JitModule>(arenas_, entries_);
}

} // namespace takt::native
