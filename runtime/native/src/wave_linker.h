#pragma once
// Links a compile's POU objects in waves, so the POUs linked first can run natively while the
// rest are still being compiled (native.h, PartListener). Each wave gets code of its own: a
// CodeArena, mapped read+execute once the wave is linked and never written again (the
// MemoryDenyWriteExecute rule, code_arena.h), and a JITDylib that resolves the wave's calls into
// the waves before it. A wave's objects reach only their own arena's data (each wave defines the
// POUs' code offsets, takt.start.*, again): between waves there are only calls, through
// RuntimeDyld's stubs on every target. The dispatch tables, which name every body, come with the
// last wave, and with them every POU that dispatches.
#include "code_arena.h"
#include "object_cache.h"
#include "takt/native/native.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Target/TargetMachine.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace takt::native {

class WaveLinker {
public:
    // `names`: the POUs' symbols (takt.body.NAME, takt.start.NAME); `hasBody`: the POUs compiled.
    WaveLinker(const bytecode::Module& module, const std::vector<std::string>& names, const std::vector<bool>& hasBody);
    WaveLinker(const WaveLinker&) = delete;
    WaveLinker& operator=(const WaveLinker&) = delete;
    ~WaveLinker();

    // Makes the JIT, once, before the first wave. false: error() says why.
    bool start(llvm::orc::JITTargetMachineBuilder tmb);
    // Links `pous` from `objects` (one each, in the same order) as one wave, and with `last` the
    // dispatch tables: every POU the objects call must be linked before or be among `pous`.
    // The wave's code is executable when this returns true; false: error() says why.
    bool link(std::span<const std::uint32_t> pous, std::span<const ObjectFile> objects, bool last,
              llvm::TargetMachine& tm);
    // The code of every POU linked so far (null entries for the others); it keeps the arenas.
    [[nodiscard]] std::unique_ptr<CompiledModule> code() const;
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
    bool fail(std::string why);

    const bytecode::Module& module_;
    const std::vector<std::string>& names_;
    const std::vector<bool>& hasBody_;
    // Declared before the JIT, which is destroyed first: its memory managers place sections into
    // arena_, the wave being linked.
    std::shared_ptr<CodeArena> arena_;
    std::vector<std::shared_ptr<CodeArena>> arenas_;
    std::vector<ObjectFile> objects_; // the files the JIT was given, which it reads until it links them
    std::vector<Entry> entries_;
    std::unique_ptr<llvm::orc::LLJIT> jit_;
    std::vector<llvm::orc::JITDylib*> waves_;
    std::string error_;
};

// The symbols of the program's POUs (pouSymbols) as the linker and the translated modules use them.
[[nodiscard]] std::string bodySymbol(const std::vector<std::string>& names, std::uint32_t p);
[[nodiscard]] std::string startSymbol(const std::vector<std::string>& names, std::uint32_t p);
inline constexpr const char* kBodyTable = "takt.bodies";
inline constexpr const char* kFrameTable = "takt.frames";
// A POU body's function: i32 (i8* image, i32 this, i32 frame, RunContext* ctx, i32 depth).
[[nodiscard]] llvm::FunctionType* bodyType(llvm::LLVMContext& cx);

} // namespace takt::native
