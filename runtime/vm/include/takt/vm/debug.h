#pragma once
// takt_vm: halting a run at a statement, the runtime half of the source-level debugger.
//
// The compiler marks where every statement's code starts (DebugEntry::statement). A StopMap holds
// one byte per code word of a module: "a statement starts here" and "a breakpoint is set here";
// every Vm that runs the module reads it. A Debugger belongs to one thread that runs a Vm (a task):
// given to Vm::setDebugger, it makes the run use the interpreter loop that looks the map up before
// each instruction, and only while something can stop it (a breakpoint set anywhere, a step or a
// pause asked for). With no debugger, or nothing armed, a run takes the loop it always took, so an
// unused debugger costs one test per run, not per instruction.
//
// A halt blocks the running thread on a futex word of its Debugger (no lock, no allocation) until
// another thread resumes it; while halted, frames() tells where it stands: the call chain from the
// entry POU to the halted statement, with each frame's instance and frame offsets in the image.
//
//   vm::StopMap stops(module);                 // off the scan thread, once per loaded module
//   vm::Debugger dbg(stops);  vm.setDebugger(&dbg);
//   stops.setBreakpoint(resolveLine(module, file, 12).pcs[0], true);
//   ... the scan thread halts; another thread: dbg.waitHalted(seen, deadline), dbg.frames(),
//   dbg.resume(StepMode::Over) ...
#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/traps.h"
#include "takt/vm/debug_expr.h"
#include "takt/vm/flow.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace takt::vm {

// The source position of the instruction at `pc`: the last debug entry at or before it
// (file = kNone when the module has none there).
struct SourcePosition {
    std::uint32_t file = bytecode::kNone;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};
[[nodiscard]] SourcePosition sourceAt(const bytecode::Module& module, std::uint32_t pc) noexcept;
// The POU whose code holds `pc` (kNone outside every POU, e.g. the cold-start code).
[[nodiscard]] std::uint32_t pouAt(const bytecode::Module& module, std::uint32_t pc) noexcept;

// A line breakpoint resolved to code: the first line at or after the asked one in that file where a
// statement starts (a declaration or a comment moves on to the next statement, as in CODESYS), and
// every statement start on that line (a line may hold several, a loop's header code in two places).
// Unverified, with the reason, when the file has no statement there or after it.
struct ResolvedLine {
    bool verified = false;
    std::uint32_t line = 0;
    std::vector<std::uint32_t> pcs;
    std::string reason;
};
[[nodiscard]] ResolvedLine resolveLine(const bytecode::Module& module, std::uint32_t file, std::uint32_t line);

// A function breakpoint: the first statement of the POU named `name` (qualified as the module names
// it: "Motor", "Motor.Start" for a method or an action, "Lib.Motor"; any case). Unverified, with
// the reason, for a name the program does not have or a POU without statements of its own.
[[nodiscard]] ResolvedLine resolveFunction(const bytecode::Module& module, std::string_view name);

// The exception breakpoints: one filter per run-time fault a statement can cause (the VM's other
// traps are the watchdog's, or the verifier rules them out), and `all`. `traps` is a mask of
// 1 << Trap. The DAP adapter offers this list; the control endpoint takes its ids.
struct ExceptionFilter {
    std::string_view id;
    std::string_view label;
    std::uint32_t traps;
};
constexpr std::uint32_t trapBit(bytecode::Trap t) noexcept {
    return 1u << static_cast<std::uint32_t>(t);
}
inline constexpr ExceptionFilter kExceptionFilters[] = {
    {"divide_by_zero", "Division by zero", trapBit(bytecode::Trap::DivByZero)},
    {"overflow", "Integer overflow ([build] overflow = \"trap\")", trapBit(bytecode::Trap::Overflow)},
    {"bounds", "Array index out of bounds", trapBit(bytecode::Trap::ArrayBounds)},
    {"null_reference", "Dereference of a NULL reference", trapBit(bytecode::Trap::NullReference)},
    {"invalid_reference", "Reference outside the data image", trapBit(bytecode::Trap::InvalidReference)},
    {"for_step_zero", "FOR loop step zero", trapBit(bytecode::Trap::ForStepZero)},
    {"stack_overflow", "Call stack overflow", trapBit(bytecode::Trap::StackOverflow)},
    {"invalid_argument", "Invalid argument to a standard function", trapBit(bytecode::Trap::InvalidArgument)},
    {"mux_selector", "MUX selector out of range", trapBit(bytecode::Trap::MuxSelector)},
    {"assertion", "Assertion failed", trapBit(bytecode::Trap::AssertionFailed)},
    {"all", "All run-time faults", 0}, // 0 here: every filter above (exceptionTraps)
};
// The traps of filter `id` (all: those of every other filter); false when there is no such filter.
[[nodiscard]] bool exceptionTraps(std::string_view id, std::uint32_t& traps) noexcept;
// The filter that names trap `t` alone ("" for none).
[[nodiscard]] std::string_view exceptionFilterOf(bytecode::Trap t) noexcept;
// Where the statement holding `pc` starts: the last statement start at or before it in the same POU
// (kNone when there is none).
[[nodiscard]] std::uint32_t statementStart(const bytecode::Module& module, std::uint32_t pc) noexcept;

// A breakpoint's hit condition as a DAP client writes it (VS Code's "Hit Count" field): `5` or
// `= 5` halts at the 5th hit only, `>= 5` (`>`, `<=`, `<`) at every hit from (after, up to,
// before) the 5th, `% 10` at every 10th. Hits are counted from when the breakpoint was set.
struct HitCondition {
    enum class Op : std::uint8_t { Always, Eq, Ge, Gt, Le, Lt, Every };
    Op op = Op::Always;
    std::uint64_t n = 0;
    [[nodiscard]] bool admits(std::uint64_t hit) const noexcept;
};
// False with `why` (naming the column, 1-based) when `text` is none of those forms.
[[nodiscard]] bool parseHitCondition(std::string_view text, HitCondition& out, std::string& why);

// A logpoint's expressions, evaluated by the thread that reaches the breakpoint; the text around
// them stays with whoever set it, who formats the record that `id` names off the scan thread.
inline constexpr std::uint32_t kMaxLogParts = 8;
struct LogPoint {
    std::uint32_t id = 0;
    std::vector<DebugExpr> parts; // at most kMaxLogParts
};
// One logpoint reached: its values as evaluated there.
struct LogRecord {
    std::uint32_t id = 0;
    std::uint32_t count = 0;
    std::array<ExprSlot, kMaxLogParts> values{};
    std::array<ExprStatus, kMaxLogParts> status{};
};

// The instruction word that stands for a breakpoint's instruction in a StopMap's patched code (one
// past the VM's invalid-opcode slot: no verified program has it).
inline constexpr std::uint32_t kBreakpointOpcode = bytecode::kOpcodeCount + 1;

class StopMap {
public:
    static constexpr std::uint8_t kStatement = 1;
    static constexpr std::uint8_t kBreakpoint = 2;
    static constexpr std::uint8_t kConditioned = 4; // the breakpoint has a slot: ask admit()
    static constexpr std::uint8_t kFlow = 8;        // a statement of the POU under flow control
    static constexpr std::uint32_t kSlots = 255;
    // Logpoints that log at one statement in one pass (a function's and a line's, …).
    static constexpr std::uint32_t kMaxLogsAt = 4;

    explicit StopMap(const bytecode::Module& module);
    // Sets or clears a breakpoint at a statement start (false, and nothing changes, when `pc` is
    // none). Any thread; a running Vm sees it at its next run at the latest.
    bool setBreakpoint(std::uint32_t pc, bool on) noexcept;
    // A conditioned breakpoint (all the statement starts of one line share it): a slot holding
    // its hit condition and its hit count, taken round-robin so that a slot a scan thread may
    // still be reading is not reused at once; kSlots when every slot is in use. Then
    // setBreakpoint(pc, slot) for each statement start. The control thread only. `condition` (a
    // BOOL DebugExpr) and `log` may be null; what they point to must live as long as the map:
    // keep() it there (a slot given up may still be read by a running thread). Breakpoints set on
    // one statement twice (a function breakpoint on the first statement a line breakpoint is on)
    // keep their own slots, conditions and hit counts: the statement halts when one of them says so.
    [[nodiscard]] std::uint32_t addSlot(const HitCondition& hit, const DebugExpr* condition = nullptr,
                                        const LogPoint* log = nullptr) noexcept;
    void keep(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }
    // What keep() holds, handed over once clearBreakpoints() unlinked it: a thread in a run that
    // began before may still read it (Debugger::runCount says when none can).
    [[nodiscard]] std::vector<std::shared_ptr<const void>> takeKept() noexcept { return std::move(kept_); }
    bool setBreakpoint(std::uint32_t pc, std::uint32_t slot) noexcept;
    // Clears every breakpoint and frees every slot.
    void clearBreakpoints() noexcept;
    // The running thread, at a breakpoint, standing at `at` (its image, instance and frame): what
    // it does there. A breakpoint without a slot halts; one with a slot runs its condition on
    // the image (false: passed over; a fault such as a division by zero: Fault, which halts with
    // `fault` saying why), then counts the hit (an atomic add: no lock, no allocation) and asks its
    // hit condition; a logpoint then logs (`logs`) instead of halting. Each breakpoint on the
    // statement is asked; it halts when one of them halts.
    enum class Verdict : std::uint8_t { Pass, Halt, Fault };
    struct Admission {
        Verdict verdict = Verdict::Pass;
        ExprStatus fault = ExprStatus::Ok;
        std::uint32_t logCount = 0;
        std::array<const LogPoint*, kMaxLogsAt> logs{};
        std::uint32_t logsOver = 0; // logpoints past kMaxLogsAt: dropped, counted as dropped
    };
    [[nodiscard]] Admission admit(std::uint32_t pc, const ExprScope& at) const noexcept;
    [[nodiscard]] std::uint64_t hits(std::uint32_t slot) const noexcept {
        return slot < kSlots ? slots_[slot].hits.load(std::memory_order_relaxed) : 0;
    }
    [[nodiscard]] bool hasBreakpoint(std::uint32_t pc) const noexcept;
    // The traps that halt a thread before its fault is reported (exception breakpoints): a mask of
    // trapBit()s, read only where a run faults. Any thread.
    void setTrapMask(std::uint32_t traps) noexcept { traps_.store(traps, std::memory_order_release); }
    [[nodiscard]] std::uint32_t trapMask() const noexcept { return traps_.load(std::memory_order_acquire); }
    [[nodiscard]] std::uint32_t breakpointCount() const noexcept { return count_.load(std::memory_order_acquire); }
    // Flow control (flow.h): the recorder the threads that run its POU fill while attached, its
    // statements marked kFlow; null: none. The control thread only; keep() the recorder (a thread
    // may still be filling the one replaced).
    void setFlow(FlowRecorder* flow) noexcept;
    // setFlow, the map owning the recorder; returns the one it owned before (a thread may still be
    // filling it: see takeKept).
    [[nodiscard]] std::shared_ptr<FlowRecorder> replaceFlow(std::shared_ptr<FlowRecorder> flow) noexcept {
        setFlow(flow.get());
        flowOwner_.swap(flow);
        return flow;
    }
    [[nodiscard]] FlowRecorder* flow() const noexcept { return flow_.load(std::memory_order_acquire); }
    [[nodiscard]] const std::atomic<std::uint8_t>* bytes() const noexcept { return map_.get(); }
    // The module's code with kBreakpointOpcode in place of the first word of every instruction that
    // has a breakpoint, for the loop that does not look the map up: a run on it costs what a run
    // without a debugger costs until it reaches a breakpoint. Null until the first breakpoint is set
    // (or when the copy could not be allocated). Its opcode words change under a running thread:
    // read them with a relaxed atomic load.
    [[nodiscard]] const std::uint32_t* patchedCode() const noexcept { return patched_.load(std::memory_order_acquire); }
    [[nodiscard]] const bytecode::Module& module() const noexcept { return *module_; }

private:
    struct Slot {
        std::atomic<bool> used{false};
        std::atomic<HitCondition::Op> op{HitCondition::Op::Always};
        std::atomic<std::uint64_t> n{0};
        std::atomic<std::uint64_t> hits{0};
        std::atomic<const DebugExpr*> condition{nullptr};
        std::atomic<const LogPoint*> log{nullptr};
        std::atomic<std::uint8_t> next{0}; // the next slot of the same statement + 1, 0: none
    };

    const bytecode::Module* module_;
    std::size_t size_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> map_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> slotOf_; // per code word: its first slot + 1, 0: none
    std::unique_ptr<Slot[]> slots_;
    std::uint32_t nextSlot_ = 0;
    std::atomic<std::uint32_t> count_{0};
    std::atomic<std::uint32_t> traps_{0};
    std::atomic<FlowRecorder*> flow_{nullptr};
    std::unique_ptr<std::uint32_t[]> patchedWords_; // made at the first breakpoint, freed with the map
    std::atomic<const std::uint32_t*> patched_{nullptr};
    void patch(std::uint32_t pc, bool on) noexcept;
    std::vector<std::shared_ptr<const void>> kept_; // the conditions and logpoints slots point to
    std::shared_ptr<FlowRecorder> flowOwner_;       // the recorder flow_ points to (replaceFlow)
};

// What a resumed thread does next. Over: halt at the next statement of this call or a caller
// (not in what it calls); Into: at the next statement anywhere; Out: at the next statement of a
// caller. A step that runs off the end of the entry POU halts at the first statement the thread
// runs next (the next program of its task, or the next cycle). Pause: at the next statement.
enum class StepMode : std::uint8_t { None, Into, Over, Out, Pause };
enum class HaltReason : std::uint8_t { Breakpoint, Step, Pause, Exception };

// One frame of the halted call chain: the POU, the instruction it stands at (the halted statement
// in the innermost frame, the call in the others), its instance (`this`) and its frame.
struct HaltFrame {
    std::uint32_t pou = bytecode::kNone;
    std::uint32_t pc = 0;
    std::uint32_t thisOffset = 0;
    std::uint32_t frameOffset = 0;
};

class Debugger {
public:
    explicit Debugger(const StopMap& stops) noexcept : stops_(&stops) {}
    Debugger(const Debugger&) = delete;
    Debugger& operator=(const Debugger&) = delete;

    // ---- any thread ----
    // A debugger halts its thread only while attached (a client is there to resume it).
    void attach() noexcept { attached_.store(true, std::memory_order_seq_cst); }
    // Forgets a pending step or pause and resumes the thread if it is halted or about to halt (a
    // session that closed): after detach() returns the thread does not stay halted.
    void detach() noexcept;
    [[nodiscard]] bool attached() const noexcept { return attached_.load(std::memory_order_acquire); }
    // Halt at the next statement the thread runs.
    void pause() noexcept;
    // Continues a halted thread with `step` (None: run until a breakpoint); false when not halted.
    bool resume(StepMode step) noexcept;
    [[nodiscard]] bool halted() const noexcept { return state_.load(std::memory_order_acquire) == kHalted; }
    // Counts halts; waitHalted sleeps until it passes `seen` (true) or CLOCK_MONOTONIC `deadlineNs`.
    [[nodiscard]] std::uint32_t haltCount() const noexcept { return halts_.load(std::memory_order_acquire); }
    [[nodiscard]] bool waitHalted(std::uint32_t seen, std::int64_t deadlineNs) noexcept;
    // While halted() (the thread is blocked, so they hold still): the chain, entry POU first.
    [[nodiscard]] std::span<const HaltFrame> frames() const noexcept { return {frames_.data(), frameCount_}; }
    // While halted(): copies `size` bytes at image offset `offset` of the image the thread halted on;
    // false outside it. Only for what the halted thread's own frames hold and nothing else writes
    // while it stands still (a VAR_IN_OUT's slot, which says what a listing or an expression must
    // read at a cycle boundary); anything else is read by a scan command.
    [[nodiscard]] bool peek(std::uint32_t offset, void* out, std::uint32_t size) const noexcept;
    // While halted(): writes what the halted thread's own frames hold (a FUNCTION's local), which
    // nothing else reads or writes while it stands still, from the thread that resumes it (so the
    // thread sees the bytes when it runs on); false outside the image or when not halted. A scan
    // command would apply at the base cycle's next boundary, possibly after the thread resumed.
    [[nodiscard]] bool poke(std::uint32_t offset, const void* bytes, std::uint32_t size) noexcept;
    [[nodiscard]] HaltReason reason() const noexcept { return reason_; }
    // While halted at a breakpoint whose condition faulted: what it found (Ok otherwise).
    [[nodiscard]] ExprStatus conditionFault() const noexcept { return fault_; }
    // While halted on an exception breakpoint: the fault the statement ran into (None otherwise).
    [[nodiscard]] bytecode::Trap trap() const noexcept { return trap_; }
    // The logpoints this thread reached, oldest first, through a ring of kLogCapacity records the
    // thread fills without lock or allocation (one producer, one consumer: call takeLog from one
    // thread only); when it is full a record is dropped and counted.
    static constexpr std::uint32_t kLogCapacity = 128;
    [[nodiscard]] bool takeLog(LogRecord& out) noexcept;
    [[nodiscard]] std::uint64_t logsDropped() const noexcept { return logsDropped_.load(std::memory_order_relaxed); }
    // Called on the halting thread as it halts (true) and as it resumes (false), e.g. to suspend
    // the thread's watchdog. Set before the thread runs.
    using Observer = void (*)(void* context, bool halted) noexcept;
    void setObserver(Observer observer, void* context) noexcept {
        observer_ = observer;
        observerContext_ = context;
    }
    // Called on the halted thread every `periodNs` while it stays halted, for a thread that has
    // more to do than run the program: the base cycle answers the control commands and publishes
    // the subscribed values meanwhile. Set before the thread runs; without one a halted thread
    // sleeps until resumed.
    using Service = void (*)(void* context) noexcept;
    void setHaltService(Service service, void* context, std::int64_t periodNs) noexcept {
        service_ = service;
        serviceContext_ = context;
        servicePeriodNs_ = periodNs;
    }

    // The stop map of the program the thread runs next (an online change brings a new one). Only
    // while the thread runs no program (parked at its cycle boundary).
    void setStops(const StopMap& stops) noexcept { stops_ = &stops; }

    // Runs that may read what the StopMap points to (a condition, a logpoint, the flow recorder)
    // are counted, the count odd while one is under way: what the control thread unlinks from the
    // map may go once every thread's count has moved on from, or was even at, the count seen after
    // the unlink (the run then under way has ended; a later one reads the map as it is now). A run
    // begins counted while the debugger is attached (Vm::run), or from where an exception breakpoint
    // catches a fault. The running thread: enterRun/leaveRun/inRun; any thread: runCount.
    void enterRun() noexcept {
        inRun_ = true;
        runs_.fetch_add(1, std::memory_order_seq_cst);
        // Before anything the run reads from the map (StoreLoad, against the unlink + count read).
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    void leaveRun() noexcept {
        inRun_ = false;
        runs_.fetch_add(1, std::memory_order_release);
    }
    [[nodiscard]] bool inRun() const noexcept { return inRun_; }
    [[nodiscard]] std::uint32_t runCount() const noexcept { return runs_.load(std::memory_order_seq_cst); }

    // ---- the running thread (the interpreter) ----
    [[nodiscard]] const StopMap& stops() const noexcept { return *stops_; }
    // The code a run takes the plain loop on while only breakpoints are set (StopMap::patchedCode);
    // null when a step, a pause, a statement run again after an exception halt or flow control
    // needs the loop that stops at every statement start.
    [[nodiscard]] const std::uint32_t* plainCode() const noexcept {
        return (stopMask() & (StopMap::kStatement | StopMap::kFlow)) == 0 ? stops_->patchedCode() : nullptr;
    }
    // Whether a run must use the loop that can halt (or record flow control).
    [[nodiscard]] bool armed() const noexcept {
        return attached_.load(std::memory_order_relaxed) &&
               (stops_->breakpointCount() != 0 || step_.load(std::memory_order_acquire) != StepMode::None ||
                stops_->flow() != nullptr);
    }
    // The StopMap bits that make the loop stop at a statement (kFlow: to record, then ask shouldHalt).
    [[nodiscard]] std::uint8_t stopMask() const noexcept {
        const auto flow = static_cast<std::uint8_t>(stops_->flow() != nullptr ? StopMap::kFlow : 0);
        return step_.load(std::memory_order_acquire) != StepMode::None || rerunPc_ != bytecode::kNone
                   ? StopMap::kStatement | StopMap::kBreakpoint | flow
                   : StopMap::kBreakpoint | flow;
    }
    // `pc`: where the thread stands (a breakpoint there may have a condition to ask); `at`: what
    // its condition or logpoint reads.
    [[nodiscard]] bool shouldHalt(std::uint8_t bits, std::uint32_t depth, std::uint32_t pc,
                                  const ExprScope& at) noexcept;
    // The frames to fill (kMaxCallDepth + 1) for a halt on `image`, then halt(n) blocks until resumed.
    [[nodiscard]] HaltFrame* frameBuffer(std::uint8_t* image, std::uint32_t imageSize) noexcept {
        haltImage_ = image;
        haltImageSize_ = imageSize;
        return frames_.data();
    }
    void halt(std::uint32_t frameCount) noexcept;
    // Where a run faults (the trap path only): whether `trap` at `pc`, `depth` halts the thread
    // (an exception breakpoint, while attached). Not when it is the statement resumed from such a
    // halt faulting again at the same instruction: continued without a fix, the fault goes on to
    // the fault policy as without a debugger.
    [[nodiscard]] bool catches(bytecode::Trap trap, std::uint32_t pc, std::uint32_t depth) noexcept;
    // Halts (frames filled, the innermost at the faulting statement's start) until resumed; then
    // the thread runs that statement again, in the loop that can halt, which forgets the fault at
    // the next statement start of this call or a caller (statementDone) or at the run's end.
    void haltOnTrap(std::uint32_t frameCount, bytecode::Trap trap, std::uint32_t pc, std::uint32_t depth) noexcept;
    void runEnded() noexcept {
        rerunPc_ = bytecode::kNone;
        if (FlowRecorder* f = stops_->flow()) {
            f->runEnded(this);
        }
    }
    // Flow control, in the loop that can halt: a run begins, a statement marked kFlow starts (the
    // open one done before any halt there, the new one's reads after it), a call returns.
    void runStarted() noexcept {
        if (FlowRecorder* f = stops_->flow()) {
            f->runStarted(this);
        }
    }
    void flowStatement(std::uint32_t pc, std::uint32_t depth, const ExprScope& at) noexcept {
        if (FlowRecorder* f = stops_->flow()) {
            f->statement(this, pc, depth, at);
        }
    }
    void flowDone(std::uint32_t depth, const ExprScope& at) noexcept {
        if (FlowRecorder* f = stops_->flow()) {
            f->statementDone(this, depth, at);
        }
    }

private:
    static constexpr std::uint32_t kRunning = 0;
    static constexpr std::uint32_t kHalted = 1;

    const StopMap* stops_;
    std::atomic<bool> attached_{false};
    std::atomic<StepMode> step_{StepMode::None};
    std::uint32_t stepDepth_ = 0;
    HaltReason pending_ = HaltReason::Breakpoint;
    HaltReason reason_ = HaltReason::Breakpoint;
    ExprStatus pendingFault_ = ExprStatus::Ok;
    ExprStatus fault_ = ExprStatus::Ok;
    bytecode::Trap pendingTrap_ = bytecode::Trap::None;
    bytecode::Trap trap_ = bytecode::Trap::None;
    // The faulting instruction of the statement being run again after an exception halt (kNone:
    // none) and its call depth: the running thread's alone.
    std::uint32_t rerunPc_ = bytecode::kNone;
    std::uint32_t rerunDepth_ = 0;
    bool inRun_ = false; // the running thread's
    std::atomic<std::uint32_t> runs_{0};
    std::atomic<std::uint32_t> state_{kRunning};
    std::atomic<std::uint32_t> halts_{0};
    Observer observer_ = nullptr;
    void* observerContext_ = nullptr;
    Service service_ = nullptr;
    void* serviceContext_ = nullptr;
    std::int64_t servicePeriodNs_ = 0;
    std::uint32_t frameCount_ = 0;
    std::array<HaltFrame, bytecode::kMaxCallDepth + 1> frames_{};
    std::uint8_t* haltImage_ = nullptr;
    std::uint32_t haltImageSize_ = 0;

    void pushLog(const LogPoint& log, const ExprScope& at) noexcept;
    std::array<LogRecord, kLogCapacity> logs_{};
    std::atomic<std::uint32_t> logHead_{0}; // next to take (the consumer's)
    std::atomic<std::uint32_t> logTail_{0}; // next to fill (the running thread's)
    std::atomic<std::uint64_t> logsDropped_{0};
};

} // namespace takt::vm
