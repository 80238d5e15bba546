#include "takt/engine/vm_runner.h"

#include "native_job.h"

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "takt/bytecode/opcodes.h"
#include "takt/native/native.h"
#include "takt/vm/debug.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

// `info`: where a failed assertion's operands are (either tier records them in the Vm).
void fill(Fault& fault, vm::Trap trap, std::uint32_t pou, std::uint32_t codeOffset, const vm::TrapInfo& info) {
    fault.message = std::string(vm::trapMessage(trap));
    fault.pou = pou;
    fault.codeOffset = codeOffset;
    fault.assertion = AssertionDetail{};
    if (trap == vm::Trap::AssertionFailed) {
        fault.assertion =
            AssertionDetail{true, info.assertA, info.assertB, info.assertMessage, info.assertFormat, info.assertKind};
    }
}

bool report(const vm::Vm& machine, vm::Trap trap, Fault& fault) {
    if (trap == vm::Trap::None) {
        return true;
    }
    const vm::TrapInfo& info = machine.lastTrap();
    fill(fault, trap, info.pou, info.codeOffset, info);
    return false;
}

const std::atomic<bool> kNeverAbort{false};

// Whether the thread's next cycle must run on the interpreter, the only tier that halts: while its
// debugger is attached with a breakpoint or logpoint set, an exception filter on, or a step or a
// pause asked for (stopMask() asks for every statement start then), or flow control recording.
// Asked once per cycle, before the cycle's first program, so a program never changes tier within
// a cycle.
bool needsInterpreter(const vm::Debugger& debugger) noexcept {
    const vm::StopMap& stops = debugger.stops();
    return debugger.attached() && (stops.breakpointCount() != 0 || stops.trapMask() != 0 ||
                                   (debugger.stopMask() & (vm::StopMap::kStatement | vm::StopMap::kFlow)) != 0);
}

vm::Vm& machineOf(void* vm) {
    return *static_cast<vm::Vm*>(vm);
}
// The native tier's calls into the interpreter's implementations (native::Host). The image
// argument is the one the Vm already holds: it is passed so LLVM sees the image escape.
native::Host hostFor(vm::Vm& machine) {
    native::Host host;
    host.vm = &machine;
    host.callNative = [](void* vm, std::uint8_t*, std::uint32_t native, std::uint32_t args) noexcept {
        return static_cast<std::uint32_t>(machineOf(vm).callNativeFunction(native, args));
    };
    host.dispatch = [](void* vm, std::uint8_t*, std::uint32_t instance, std::uint32_t slot) noexcept {
        return machineOf(vm).dispatchTarget(instance, slot);
    };
    host.moveString = [](void* vm, std::uint8_t*, std::uint32_t dst, std::uint32_t src, std::uint32_t cap,
                         std::uint32_t wide) noexcept {
        return static_cast<std::uint32_t>(
            machineOf(vm).moveString(dst, src, cap, wide != 0) ? vm::Trap::None : vm::Trap::InvalidReference);
    };
    host.compareStrings = [](void* vm, std::uint8_t*, std::uint32_t a, std::uint32_t b, std::uint32_t wide) noexcept {
        return machineOf(vm).compareStrings(a, b, wide != 0);
    };
    host.valuesEqual = [](void* vm, std::uint8_t*, std::uint32_t type, std::uint32_t a, std::uint32_t b) noexcept {
        return static_cast<std::uint32_t>(machineOf(vm).valuesEqual(type, a, b) ? 1 : 0);
    };
    host.assertFailed = [](void* vm, std::uint8_t*, std::uint32_t a, std::uint32_t b, std::uint32_t message,
                           std::uint32_t format,
                           std::uint32_t kind) noexcept { machineOf(vm).recordAssertion(a, b, message, format, kind); };
    return host;
}

std::uint32_t instanceBytes(const bytecode::Module& module, std::uint32_t pou) {
    const std::uint32_t type = module.pous[pou].instanceType;
    return type < module.types.size() ? module.types[type].size : 0;
}

} // namespace

std::string nativeFallbackStatus(const bytecode::Module& module, const native::CompileResult& result) {
    if (result.unsupportedPc == bytecode::kNone) {
        return "interpreter (native: " + result.error + ")";
    }
    Fault at;
    at.pou = native::pouContaining(module, result.unsupportedPc);
    at.codeOffset = result.unsupportedPc;
    const FaultReport where = describeFault(module, at);
    std::string text = "interpreter (native: unsupported ";
    text += result.unsupportedOp < bytecode::kOpcodeCount ? bytecode::kOpcodeInfo[result.unsupportedOp].name
                                                          : std::string_view("opcode");
    text += " at " + (where.pou.empty() ? std::string("?") : where.pou);
    if (where.line != 0) {
        text += ":" + std::to_string(where.line);
    }
    return text + ")";
}

std::vector<native::DirectFb> directFbsOf(const vm::Vm& machine) {
    std::vector<native::DirectFb> direct(machine.module().pous.size());
    for (std::uint32_t p = 0; p < direct.size(); ++p) {
        const vm::Vm::NativeFbEntry fb = machine.nativeFbEntry(p);
        direct[p] = native::DirectFb{fb.fn, fb.layout, fb.layoutBytes, fb.native};
    }
    return direct;
}

bool parseExecution(std::string_view text, Execution& out) {
    if (text == "interpreter") {
        out = Execution::Interpreter;
        return true;
    }
    if (text == "native") {
        out = Execution::Native;
        return true;
    }
    return false;
}

// What the interpreter's calls of compiled bodies run them with (vm::CompiledCalls): the newest
// code taken and the run context of the runner's program, set before each run.
struct VmRunner::CompiledCallState {
    vm::CompiledCalls calls{nullptr, &CompiledCallState::run, this};
    const native::CompiledModule* code = nullptr;
    native::Host host;
    native::RunContext context; // all but the ticks and the pc, which are per call
    std::uint8_t* image = nullptr;
    // Written by the scan thread alone: a load and a store, no locked instruction per call.
    mutable std::atomic<std::uint64_t> ran{0};

    // A called POU's body: compiled code is called with the interpreter's instance, frame and
    // depth (those of its ENTER), as compiled code calls it. A called POU is never an entry the
    // engine runs, so its code makes no assumption about where the instance lies.
    static bool run(const void* self, std::uint32_t pou, std::uint32_t thisOffset, std::uint32_t frameOffset,
                    std::uint32_t depth, std::uint64_t& ticks, vm::Trap& trap, std::uint32_t& pc) noexcept {
        const auto& state = *static_cast<const CompiledCallState*>(self);
        const native::Entry entry = state.code->entry(pou);
        if (entry == nullptr) {
            return false;
        }
        state.ran.store(state.ran.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        native::RunContext ctx = state.context;
        ctx.ticks = ticks;
        trap = native::trapOf(entry(state.image, thisOffset, frameOffset, &ctx, depth));
        ticks = ctx.ticks;
        pc = ctx.pc;
        return true;
    }
};

VmRunner::VmRunner(std::uint64_t budget, Execution execution, NativeStart start)
    : budget_(budget), execution_(execution), start_(start), calls_(std::make_unique<CompiledCallState>()) {}

VmRunner::~VmRunner() = default;

std::uint64_t VmRunner::callsRunNatively() const noexcept {
    return calls_->ran.load(std::memory_order_relaxed);
}

std::unique_ptr<CodeRunner> VmRunner::forTask(std::uint32_t slot) const {
    auto runner = std::make_unique<VmRunner>(budget_, execution_, start_);
    runner->slot_ = slot;
    return runner;
}

namespace {
// The machine prepare() built for a program, and the program's native compile. attach() takes
// them and parks the runner's previous ones here instead, so those are freed with this program,
// off the cycle.
struct VmState final : RunnerState {
    std::unique_ptr<vm::Vm> machine;
    std::shared_ptr<NativeJob> job; // null: the program runs on the interpreter
    bool fresh = true;              // `machine` is this program's, not yet taken
    // The program's compile, which stays here when attach() takes `job`: the compile this
    // program's other runners (prepared again, or for a task) share. Only slot 0 compiles.
    std::shared_ptr<NativeJob> compile;
};
} // namespace

void VmRunner::attach(LoadedProgram& program) {
    auto* state = static_cast<VmState*>(program.runnerState(slot_));
    if (state == nullptr || !state->fresh) {
        prepareWith(program, start_);
        state = static_cast<VmState*>(program.runnerState(slot_));
    }
    // A replaced program's compile is of no use any more: it stops at its next cancel point
    // (the job itself is freed with the program it is parked on).
    if (job_ != nullptr && job_ != state->job) {
        job_->cancel();
    }
    vm_.swap(state->machine);
    job_.swap(state->job);
    native_ = nullptr;
    part_ = nullptr;
    partPous_.store(0, std::memory_order_relaxed);
    switched_.store(false, std::memory_order_relaxed);
    {
        const std::lock_guard<std::mutex> lock(statusMutex_);
        statusJob_ = job_;
        statusAttached_ = true;
    }
    takeCode(); // a compile already done (NativeStart::Wait) runs from the first cycle
    state->fresh = false;
    vm_->setAbortFlag(abort_);
    vm_->setDebugger(debugger_);
    if (debugger_ != nullptr) {
        debugger_->setStops(program.stops());
    }
    attached_ = &program;
}

void VmRunner::prepare(LoadedProgram& program) const {
    // An online change: the running program keeps running (natively, if it does) while the
    // next one is compiled here, so the change never brings a phase on the interpreter.
    prepareWith(program, NativeStart::Wait);
}

void VmRunner::prepareWith(LoadedProgram& program, NativeStart start) const {
    auto state = std::make_unique<VmState>();
    // The machine's image ends where its own call stack ends (vm.h setStackBase).
    const std::size_t end =
        std::min<std::size_t>(program.imageSize(), std::size_t{program.stackBase(slot_)} + program.module().stackSize);
    state->machine = std::make_unique<vm::Vm>(program.module(), std::span<std::uint8_t>(program.image(), end));
    if (slot_ != 0) {
        state->machine->setStackBase(program.stackBase(slot_));
    }
    state->machine->setBudget(budget_);
    state->machine->setAbortFlag(abort_);
    if (execution_ == Execution::Native) {
        // One compile per program, however many runners and however often they are prepared:
        // a task's runner shares the base runner's (runnerState(0), prepared before it by the
        // same kind of runner; none there: the task interprets), and the base runner prepared
        // again keeps its own, unless that one was cancelled (the program was replaced and is
        // attached again) before it made code.
        const auto* base = static_cast<const VmState*>(program.runnerState(0));
        const NativeJob* shared = base != nullptr ? base->compile.get() : nullptr;
        const bool madeCode = shared != nullptr && shared->done() && shared->code() != nullptr;
        if (shared != nullptr && (!shared->cancelRequested() || madeCode)) {
            state->compile = base->compile;
        } else if (slot_ == 0) {
            // The standard FBs: the machine's own C++, called or inlined by the compiled code.
            const std::vector<native::DirectFb> direct = directFbsOf(*state->machine);
            if (start == NativeStart::Wait) {
                state->compile = NativeJob::run(program.modulePtr(), direct);
            } else {
                NativeJob::Listener onDone;
                if (listener_) {
                    onDone = [listener = listener_](const NativeJob& job) {
                        listener(job.code() != nullptr ? std::string("native") : job.fallbackStatus(), job.compileMs());
                    };
                }
                state->compile = NativeJob::start(program.modulePtr(), direct, std::move(onDone));
            }
        }
        state->job = state->compile;
    }
    program.setRunnerState(std::move(state), slot_);
}

void VmRunner::takeCode() noexcept {
    if (native_ != nullptr || job_ == nullptr) {
        return;
    }
    const bool done = job_->done();
    // A compile that failed after it published parts: the whole program runs on the
    // interpreter, as its status says.
    const NativePart* newest = done && job_->code() == nullptr ? nullptr : job_->newest();
    if (newest != part_) {
#if defined(__aarch64__)
        // The code was written by another core (its cache maintenance done there): this core
        // must not run instructions it fetched before, from memory an earlier program's code
        // may have had at the same address.
        asm volatile("isb" ::: "memory");
#endif
        part_ = newest;
        partPous_.store(newest != nullptr ? newest->pous : 0, std::memory_order_relaxed);
    }
    if (done && job_->code() != nullptr) {
        native_ = job_->code();
        switched_.store(true, std::memory_order_relaxed);
    }
}

void VmRunner::cancelCompile() noexcept {
    if (job_ != nullptr) {
        job_->cancel();
    }
}

void VmRunner::cycleBoundary() {
    takeCode();
}

VmRunner::StatusView VmRunner::statusView() const {
    const std::lock_guard<std::mutex> lock(statusMutex_);
    return {statusAttached_, statusJob_};
}

std::string VmRunner::executionStatus() const {
    const auto [attached, job] = statusView();
    if (!attached) {
        return {};
    }
    if (job == nullptr) {
        return "interpreter";
    }
    if (switched_.load(std::memory_order_relaxed)) {
        return "native";
    }
    if (job->done() && job->code() == nullptr) {
        return job->fallbackStatus().empty() ? std::string("interpreter") : job->fallbackStatus();
    }
    const std::uint32_t pous = partPous_.load(std::memory_order_relaxed);
    const NativePart* newest = job->newest();
    if (pous != 0 && newest != nullptr) {
        return "interpreter (native compiling, " + std::to_string(pous) + " of " + std::to_string(newest->of) +
               " POUs native)";
    }
    return "interpreter (native compiling)";
}

double VmRunner::nativeCompileMs() const {
    const std::shared_ptr<const NativeJob> job = statusView().job;
    return job != nullptr && job->done() ? job->compileMs() : 0.0;
}

VmRunner::NativePous VmRunner::nativePous() const {
    const std::shared_ptr<const NativeJob> job = statusView().job;
    if (job == nullptr || !job->done()) {
        return {};
    }
    return {job->pousCompiled(), job->pousReused()};
}

void VmRunner::setAbortFlag(const std::atomic<bool>* flag) {
    abort_ = flag;
    if (vm_ != nullptr) {
        vm_->setAbortFlag(flag);
    }
}

void VmRunner::setDebugger(vm::Debugger* debugger) {
    debugger_ = debugger;
    if (vm_ != nullptr) {
        vm_->setDebugger(debugger);
    }
    if (debugger != nullptr && attached_ != nullptr) {
        debugger->setStops(attached_->stops());
    }
}

void VmRunner::setWallClock(std::int64_t wallNs) {
    wallNs_ = wallNs;
    // Both tiers run on the same image (variables, FB instances, the standard FBs' state), so
    // a cycle may run on either: two atomic loads, nothing allocated or locked.
    debugging_ = debugger_ != nullptr && needsInterpreter(*debugger_);
}

vm::Vm& VmRunner::vmFor(LoadedProgram& program) {
    if (attached_ != &program || vm_ == nullptr) {
        attach(program);
    }
    return *vm_;
}

bool VmRunner::runInit(LoadedProgram& program, Fault& fault) {
    if (attached_ == &program && vm_ != nullptr) {
        vm_->setWallTime(wallNs_);
        return report(*vm_, vm_->runInit(), fault);
    }
    // Online change prepares the next program while the current one stays attached.
    vm::Vm machine(program.module(), std::span<std::uint8_t>(program.image(), program.imageSize()));
    machine.setWallTime(wallNs_);
    machine.setBudget(budget_);
    machine.setAbortFlag(abort_);
    return report(machine, machine.runInit(), fault);
}

bool VmRunner::runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                          Fault& fault) {
    vm::Vm& machine = vmFor(program);
    machine.setCycleTime(nowNs);
    machine.setWallTime(wallNs_);
    const bytecode::Module& module = program.module();
    // This runner's call stack (slot_), which ends where its machine's image ends (prepare).
    const std::uint64_t stackBase = program.stackBase(slot_);
    const std::uint64_t stackEnd = std::min<std::uint64_t>(program.imageSize(), stackBase + module.stackSize);
    CompiledCallState& calls = *calls_;
    if (part_ != nullptr && !debugging_) {
        calls.code = part_->code;
        calls.calls.has = part_->has.get();
        calls.host = hostFor(machine);
        calls.context = native::RunContext{0,
                                           abort_ != nullptr ? abort_ : &kNeverAbort,
                                           bytecode::kNone,
                                           &calls.host,
                                           stackEnd,
                                           machine.nativeFbContext()};
        calls.image = program.image();
    }
    if (native_ == nullptr && job_ != nullptr) {
        waitingRuns_.fetch_add(1, std::memory_order_relaxed);
    } else if (native_ != nullptr && debugging_) {
        debugRuns_.fetch_add(1, std::memory_order_relaxed);
    } else if (native_ != nullptr) {
        const native::Entry entry = native_->entry(instance.pou);
        const std::uint64_t stateEnd = program.stateSize(); // below every call stack
        // A body the tier has no entry for, or whose frame does not fit, goes to the interpreter,
        // which reports InvalidCall / StackOverflow as it always has. The compiled code also
        // relies on the instance lying below the stack (translator.cpp: alias scopes).
        if (entry != nullptr && stackBase + module.pous[instance.pou].frameSize <= stackEnd &&
            instance.offset + static_cast<std::uint64_t>(instanceBytes(module, instance.pou)) <= stateEnd) {
            native::RunContext ctx = calls.context;
            ctx.ticks = budget_ != 0 ? budget_ : std::numeric_limits<std::uint64_t>::max();
            const vm::Trap trap =
                native::trapOf(entry(program.image(), instance.offset, static_cast<std::uint32_t>(stackBase), &ctx, 0));
            if (trap == vm::Trap::None) {
                return true;
            }
            fill(fault, trap, native::pouContaining(module, ctx.pc), ctx.pc, machine.lastTrap());
            return false;
        }
    }
    // The program's body on the interpreter; its calls run the POUs compiled so far natively
    // (none while a debugger needs the interpreter).
    machine.setCompiledCalls(part_ != nullptr && !debugging_ ? &calls.calls : nullptr);
    return report(machine, machine.runPou(instance.pou, instance.offset), fault);
}

} // namespace takt::engine
