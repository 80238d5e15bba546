#pragma once
// takt_native: the native execution tier. A verified Module is translated instruction by
// instruction (opcodes.def, the one list) into machine code through a JIT library found at
// build time (LLVM ORC). The code runs on the same data image and frames as the interpreter and
// reports the same traps at the same instruction, so the engine can run either tier on one
// program. A module with any instruction the translator does not handle yet is not compiled:
// the caller runs it on the interpreter and says why.
#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/traps.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace takt::native {

// What compiled code calls back into: the interpreter's own implementations of the instructions
// that run C++ (native functions, dispatch, strings, aggregate equality, assertions; the
// standard FBs are called directly, DirectFb),
// so both tiers share one implementation. `vm` is the vm::Vm of the program; every call also
// gets the image pointer the code runs on, which tells LLVM the call may read and write the
// image (the code's image argument is noalias). Offsets are image offsets.
struct Host {
    void* vm = nullptr;
    std::uint32_t (*callNative)(void* vm, std::uint8_t* image, std::uint32_t native, std::uint32_t args) noexcept;
    // The POU a dispatched call runs (CALL_IFACE / CALL_VIRT), kNone when there is none.
    std::uint32_t (*dispatch)(void* vm, std::uint8_t* image, std::uint32_t instance, std::uint32_t slot) noexcept;
    // SMOV / WSMOV (wide = 1): the Trap (InvalidReference when dst cannot hold cap + 1 units).
    std::uint32_t (*moveString)(void* vm, std::uint8_t* image, std::uint32_t dst, std::uint32_t src, std::uint32_t cap,
                                std::uint32_t wide) noexcept;
    std::int32_t (*compareStrings)(void* vm, std::uint8_t* image, std::uint32_t a, std::uint32_t b,
                                   std::uint32_t wide) noexcept;
    std::uint32_t (*valuesEqual)(void* vm, std::uint8_t* image, std::uint32_t type, std::uint32_t a,
                                 std::uint32_t b) noexcept;
    // ASSERT_FAIL: records where the values are, as the interpreter's TrapInfo holds them.
    void (*assertFailed)(void* vm, std::uint8_t* image, std::uint32_t a, std::uint32_t b, std::uint32_t message,
                         std::uint32_t format, std::uint32_t kind) noexcept;
};

// What one run of compiled code reads and reports. The layout is part of the generated code
// (translator.cpp builds the same struct type): keep the field order.
struct RunContext {
    std::uint64_t ticks = 0;                  // watchdog budget left; UINT64_MAX when unlimited
    const std::atomic<bool>* abort = nullptr; // never null while code runs
    std::uint32_t pc = bytecode::kNone;       // code offset of the faulting instruction
    const Host* host = nullptr;               // never null while code runs
    // The end of the call stack the code runs on (image offset): a call whose frame would pass it
    // is a StackOverflow, a reference past it an InvalidReference, as in the interpreter, whose
    // image of that stack ends there (vm::Vm::setStackBase). One compiled module serves every
    // call stack of the program (the base cycle's and each task thread's), so this is read per
    // run, once per function, rather than compiled in. 0 traps every call and reference.
    std::uint64_t stackEnd = 0;
    // The context of the standard FBs the code calls directly (DirectFb::fn's first argument):
    // the vm::Vm of the running call stack (vm::Vm::nativeFbContext), whose cycle time the
    // timers read. Per run for the same reason.
    const void* fbContext = nullptr;
};

// The entry of one POU's body: returns the Trap (None when it returned normally). `depth` is the
// call depth (0 for a PROGRAM body the engine runs; kMaxCallDepth bounds it as in the VM).
using Entry = std::uint32_t (*)(std::uint8_t* image, std::uint32_t thisOffset, std::uint32_t frameOffset,
                                RunContext* ctx, std::uint32_t depth);

class CompiledModule {
public:
    virtual ~CompiledModule() = default;
    // The body of POU `pou`, null when it has none (native FBs, no code).
    [[nodiscard]] virtual Entry entry(std::uint32_t pou) const noexcept = 0;
};

struct CompileResult {
    std::unique_ptr<CompiledModule> code; // null: run on the interpreter
    // Why not: the first instruction the translator does not handle (unsupportedPc, its opcode)
    // or a failure of the JIT library (error).
    std::uint32_t unsupportedPc = bytecode::kNone;
    std::uint32_t unsupportedOp = 0;
    std::string error;
    double compileMs = 0; // wall-clock time of translation and code generation
    // The standard FBs' C++ was linked in as LLVM bitcode (for LLVM to inline), rather than
    // called (takt built without clang 14's bitcode, or no standard FB called).
    bool standardFbsLinked = false;
    // The compile stopped because its cancel flag was set (no code; `error` says so).
    bool cancelled = false;
    // The POU bodies optimised and turned into machine code by this compile, and those whose
    // code an earlier compile of the process left (their translation unchanged: an online change
    // compiles the POUs it changed).
    std::uint32_t pousCompiled = 0;
    std::uint32_t pousReused = 0;
    // The threads that translated and compiled the POUs side by side (compile()'s `threads`).
    std::uint32_t compileThreads = 0;
};

// True when the translator has an emitter for `op` (false for all when not available()).
[[nodiscard]] bool translates(bytecode::Opcode op) noexcept;

// The tier is a plugin, takt-native.so (the Debian package takt-native, which brings LLVM):
// the first call of any function below loads it (dlopen), so a program on the interpreter never
// maps LLVM. True when it loaded: takt was built with a JIT library (TAKT_NATIVE) and the plugin
// of this takt's build is installed.
[[nodiscard]] bool available() noexcept;
// Why not available(): the add-on not installed, not loadable, of another build, or takt built
// without the tier. Empty when available.
[[nodiscard]] std::string_view unavailableReason() noexcept;
// The library, for logs and status ("LLVM 14 ORC"); empty when not available.
[[nodiscard]] std::string_view libraryName() noexcept;

// Translates every POU body of a verified module (Module::initCode, run once at a cold start,
// stays on the interpreter), each in a module of its own whose machine code is kept for the next
// compile (the POU's code is generated again only when its translation changed). Never throws;
// thread safe (each call has its own JIT), so it runs off the scan thread. The code lives in memory
// never writable and executable at once (code_memory.h); the JIT is gone when this returns.
// Without the plugin: no code, and `error` says unavailableReason().
// A standard FB (TON, R_TRIG …) the compiled code calls directly instead of through Host:
// fn(RunContext::fbContext, image + instance, layout) — the interpreter's C++ with its
// arguments; fn and layout stay valid as long as the code (vm::Vm::nativeFbEntry). A call of a
// standard FB without one (null fn) is not translated: the program runs on the interpreter.
struct DirectFb {
    const void* fn = nullptr;
    const void* layout = nullptr;
    std::uint32_t layoutBytes = 0; // the layout's size: copied into the code as a constant
    std::uint32_t native = 0;      // bytecode::Native: which standard FB
};

// Told, on the compiling thread, of code for part of the program before the rest is linked
// (compile()'s `onPart`): `code` has the entries of the POUs linked so far (null for the others),
// and those POUs call only POUs it has. Each call has more POUs than the one before; the whole
// program comes as CompileResult::code, not through the listener.
using PartListener = std::function<void(std::shared_ptr<const CompiledModule> code)>;

// `directFbs`: per POU (may be empty). `leaveToInterpreter`: opcodes to treat as not translated
// (tests of the fallback, which a new opcode without an emitter takes). `cancel` (may be null),
// set from another thread, ends the compile early with no code: it is read between POUs, makes
// the optimiser skip every pass still to run, and is read again before code generation, which
// itself runs to its end once begun. `threads`: how many threads compile the POUs side by side
// (each POU's module is independent; the link after them is one thread's), 0 for one per CPU the
// process may run on (fewer when its cgroup's CPU quota allows fewer); at most 8 and one per POU.
// The threads beside the caller's are SCHED_OTHER at the caller's niceness, whatever the caller's
// policy. `onPart` (may be null): the POUs are compiled and linked in waves, callees first, and
// each wave but the last is handed to it as soon as it is linked, so a program can move to
// native code a POU at a time; null: linked in one.
[[nodiscard]] CompileResult compile(const bytecode::Module& module, std::span<const DirectFb> directFbs = {},
                                    std::span<const bytecode::Opcode> leaveToInterpreter = {},
                                    const std::atomic<bool>* cancel = nullptr, unsigned threads = 0,
                                    const PartListener* onPart = nullptr);

// The POU whose code holds `pc` (kNone if none), as the interpreter names a fault's POU.
[[nodiscard]] inline std::uint32_t pouContaining(const bytecode::Module& module, std::uint32_t pc) noexcept {
    for (std::uint32_t i = 0; i < module.pous.size(); ++i) {
        const bytecode::PouEntry& pou = module.pous[i];
        if (pou.code != bytecode::kNone && pc >= pou.code && pc < pou.codeEnd) {
            return i;
        }
    }
    return bytecode::kNone;
}

// The Trap a run returned, as the enum.
[[nodiscard]] inline bytecode::Trap trapOf(std::uint32_t code) noexcept {
    return code < bytecode::kTrapCount ? static_cast<bytecode::Trap>(code) : bytecode::Trap::InvalidOpcode;
}

} // namespace takt::native
