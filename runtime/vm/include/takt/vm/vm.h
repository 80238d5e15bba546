#pragma once
// takt_vm: the scan-cycle interpreter. One Vm runs one verified Module over a data image the
// caller owns (module.h: [constants | globals + program instances | call stack]). A run never
// allocates and never throws; faults come back as a Trap with the code offset, which the
// Module's debug map turns into POU, line and column.
//
// Typical use by the engine, once per cycle and program instance:
//   vm.setCycleTime(nowNs);                   // fixed for the whole cycle (timers, TIME())
//   vm.setWallTime(wallNs);                   // likewise the date and time (NOW_DT(), RTC)
//   Trap t = vm.runPou(inst.pou, inst.offset);  // one PROGRAM body
//   if (t != Trap::None) { const TrapInfo& info = vm.lastTrap(); … }
#include "takt/bytecode/module.h"
#include "takt/bytecode/traps.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace takt::vm {

class Debugger;

// Every run-time fault (takt/bytecode/traps.h: TRAP instructions name them too).
using Trap = bytecode::Trap;

[[nodiscard]] std::string_view trapName(Trap trap) noexcept;
[[nodiscard]] std::string_view trapMessage(Trap trap) noexcept;

struct TrapInfo {
    Trap code = Trap::None;
    std::uint32_t codeOffset = bytecode::kNone; // word index of the faulting instruction in Module::code
    std::uint32_t pou = bytecode::kNone;        // POU whose code contains codeOffset
    std::uint32_t depth = 0;                    // call depth at the fault (0 = the entry POU)
    // AssertionFailed: image offsets of the compared values and how to read them (opcodes.h).
    std::uint32_t assertA = 0;
    std::uint32_t assertB = 0;
    std::uint32_t assertMessage = 0;
    std::uint32_t assertFormat = 0;
    std::uint32_t assertKind = 0;
};

inline constexpr std::uint32_t kMaxCallDepth = bytecode::kMaxCallDepth;

// Bodies another tier compiled (the native tier's, which a program takes a POU at a time): a call
// of a POU that has one runs it instead of the POU's bytecode, with the same instance, frame,
// call depth and watchdog, and its trap is the run's. Calls only: a run's entry POU is the
// caller's to choose (runPou runs bytecode).
struct CompiledCalls {
    // Per POU of the module: nonzero where run() has a body.
    const std::uint8_t* has = nullptr;
    // Runs POU `pou`'s body on the instance at `thisOffset` with its frame at `frameOffset`, at
    // call depth `depth`; `ticks`: the watchdog's ticks left, in and out. A trap comes back in
    // `trap`, its instruction in `pc`. false: the body cannot run there (nothing ran; the
    // interpreter runs the bytecode).
    bool (*run)(const void* context, std::uint32_t pou, std::uint32_t thisOffset, std::uint32_t frameOffset,
                std::uint32_t depth, std::uint64_t& ticks, Trap& trap, std::uint32_t& pc) noexcept = nullptr;
    const void* context = nullptr;
};

class Vm {
public:
    // `module` must have passed the verifier and outlive the Vm. `image` must hold at least
    // requiredImageSize(module) bytes; the caller initialises it (resetImage() does a cold start copy).
    Vm(const bytecode::Module& module, std::span<std::uint8_t> image);
    ~Vm();
    Vm(const Vm&) = delete;
    Vm& operator=(const Vm&) = delete;

    [[nodiscard]] static std::size_t requiredImageSize(const bytecode::Module& module) noexcept;

    // Copies Module::initImage over constants + globals and clears the stack region.
    void resetImage() noexcept;
    // Runs Module::initCode (if any) with this = 0 and the frame at the stack base.
    [[nodiscard]] Trap runInit() noexcept;
    // Runs one POU with an instance (a PROGRAM body: instanceOffset = ProgramInstance::offset).
    [[nodiscard]] Trap runPou(std::uint32_t pou, std::uint32_t instanceOffset) noexcept;

    // Cycle start time in ns (virtual or CLOCK_MONOTONIC), read by timers and TIME().
    void setCycleTime(std::int64_t nowNs) noexcept;
    [[nodiscard]] std::int64_t cycleTime() const noexcept { return nowNs_; }
    // The wall clock at the cycle's start in ns since 1970-01-01 (CLOCK_REALTIME, or virtual),
    // read by NOW_DT() and RTC; fixed for the whole cycle like the cycle time.
    void setWallTime(std::int64_t wallNs) noexcept;
    [[nodiscard]] std::int64_t wallTime() const noexcept { return wallNs_; }

    // Watchdog. The budget counts back-edges and calls per run (0 = unlimited): a run that
    // exceeds it stops with BudgetExceeded. The abort flag (may be set from another thread)
    // is polled at the same points and stops the run with Aborted; the Vm never clears it.
    void setBudget(std::uint64_t ticks) noexcept { budget_ = ticks; }
    void setAbortFlag(const std::atomic<bool>* flag) noexcept { abort_ = flag; }
    // Where runPou puts its first frame (default: right after the globals). A task on a scan
    // thread of its own gets a call stack of its own further up the image; its Vm's image span
    // ends where that stack ends, so a deep call traps StackOverflow instead of running into
    // another task's stack. Set off the cycle.
    void setStackBase(std::uint32_t offset) noexcept { stackBase_ = offset; }

    // Source-level debugging (debug.h): while `debugger` is armed, runs look its stop map up
    // before each instruction and may halt this thread at a statement; where a run faults, its
    // exception breakpoints may halt it at the faulting statement first. Null (the default): none.
    // Set off the cycle; the Debugger outlives the runs.
    void setDebugger(Debugger* debugger) noexcept { debugger_ = debugger; }
    // The compiled bodies calls run instead of bytecode (null, the default: none); not while the
    // debugger is armed (a halt needs every frame in the interpreter). Set between runs; `calls`
    // outlives the runs it is set for.
    void setCompiledCalls(const CompiledCalls* calls) noexcept { compiled_ = calls; }
    [[nodiscard]] Debugger* debugger() const noexcept { return debugger_; }

    [[nodiscard]] const TrapInfo& lastTrap() const noexcept { return trap_; }
    [[nodiscard]] std::span<std::uint8_t> image() const noexcept { return image_; }
    [[nodiscard]] const bytecode::Module& module() const noexcept { return *module_; }

    // For the native execution tier (takt/native/native.h, Host): the interpreter's own
    // implementations of the instructions that run C++, on this Vm's image and cycle time, so
    // both tiers share them. Arguments are image offsets the verified code computed.
    [[nodiscard]] Trap callNativeFunction(std::uint32_t native, std::uint32_t args) noexcept;
    [[nodiscard]] std::uint32_t dispatchTarget(std::uint32_t instance, std::uint32_t slot) const noexcept;
    [[nodiscard]] bool moveString(std::uint32_t dst, std::uint32_t src, std::uint32_t cap, bool wide) noexcept;
    [[nodiscard]] std::int32_t compareStrings(std::uint32_t a, std::uint32_t b, bool wide) const noexcept;
    [[nodiscard]] bool valuesEqual(std::uint32_t type, std::uint32_t a, std::uint32_t b) const noexcept;
    // A standard FB's C++ for compiled code to call directly, fn(*nativeFbContext(), image +
    // instance, *layout) (natives.h's NativeFb): all null when POU `pou` is no standard FB. The
    // pointers live as long as this Vm. The layout depends on the module only, so code compiled
    // with one Vm's entries may run with another Vm of the same module as the context.
    struct NativeFbEntry {
        const void* fn = nullptr;
        const void* layout = nullptr;
        std::uint32_t layoutBytes = 0;
        std::uint32_t native = 0; // bytecode::Native
    };
    [[nodiscard]] NativeFbEntry nativeFbEntry(std::uint32_t pou) const noexcept;
    // The standard FBs' context: this Vm's image and cycle time (it follows setCycleTime).
    [[nodiscard]] const void* nativeFbContext() const noexcept;
    // ASSERT_FAIL: lastTrap()'s assertion fields then name the operands, as after a run.
    void recordAssertion(std::uint32_t a, std::uint32_t b, std::uint32_t message, std::uint32_t format,
                         std::uint32_t kind) noexcept;

    // Implementation detail shared with the natives (natives.h); not for the engine.
    struct Resolved;

private:
    Trap run(std::uint32_t entry, std::uint32_t thisOffset, std::uint32_t frameOffset) noexcept;

    const bytecode::Module* module_;
    std::span<std::uint8_t> image_;
    std::unique_ptr<Resolved> resolved_;
    std::int64_t nowNs_ = 0;
    std::int64_t wallNs_ = 0;
    std::uint64_t budget_ = 0;
    std::uint32_t stackBase_ = 0; // set by the constructor to constSize + globalSize
    const std::atomic<bool>* abort_ = nullptr;
    Debugger* debugger_ = nullptr;
    const CompiledCalls* compiled_ = nullptr;
    TrapInfo trap_;
};

} // namespace takt::vm
