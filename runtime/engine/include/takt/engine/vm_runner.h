#pragma once
// The CodeRunner that executes bytecode with the takt VM: the interpreter, or the native tier
// (takt/native/native.h) where it compiled the program, with the interpreter as its fallback.
// The native tier cannot halt: while the thread's debugger needs to halt it (a debug session with
// a breakpoint, an exception filter, a step or a pause), the runner's cycles run the same
// program on the interpreter, on the same image, and run native again once it does not; the
// choice is made once per cycle, before its first program.
// The native code of a program is compiled off the scan thread (native_job.h): with
// NativeStart::Background the first program runs on the interpreter until the code is ready and
// each runner switches at its next cycle boundary; with Wait the code is compiled before the
// program is attached. An online change's program is always compiled before the swap.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/program.h"

namespace takt::vm {
class Vm;
class Debugger;
} // namespace takt::vm
namespace takt::native {
class CompiledModule;
struct CompileResult;
struct DirectFb;
} // namespace takt::native

namespace takt::engine {

// [runtime] execution / --execution: how program bodies run.
enum class Execution : std::uint8_t { Interpreter, Native };

// "interpreter" / "native"; false for any other text.
[[nodiscard]] bool parseExecution(std::string_view text, Execution& out);

// [runtime] native_start: when a natively executed program starts, Background on the
// interpreter at once (the code is compiled beside it), Wait once its code is compiled.
enum class NativeStart : std::uint8_t { Background, Wait };

class NativeJob;
struct NativePart;

// The standard FBs of `machine`'s module as the native tier calls them (one per POU).
[[nodiscard]] std::vector<native::DirectFb> directFbsOf(const vm::Vm& machine);

// runtime.status's `execution` for a program the native tier did not compile: "interpreter
// (native: unsupported OP at POU:line)" or "interpreter (native: <library error>)".
[[nodiscard]] std::string nativeFallbackStatus(const bytecode::Module& module, const native::CompileResult& result);

class VmRunner final : public CodeRunner {
public:
    // `budget`: watchdog ticks (back-edges and calls) per program run; 0 = unlimited.
    // `execution` Native compiles each program prepared for this runner (prepare(), off the
    // cycle), in the background or before it is attached (`start`); a program the native tier
    // cannot compile runs on the interpreter, which executionStatus() says.
    explicit VmRunner(std::uint64_t budget = 0, Execution execution = Execution::Interpreter,
                      NativeStart start = NativeStart::Wait);
    ~VmRunner() override;
    VmRunner(const VmRunner&) = delete;
    VmRunner& operator=(const VmRunner&) = delete;

    // A task thread's runner: call stack `slot`, same budget and execution, a machine of its
    // own. With Execution::Native it runs the code compiled for the same program by this runner
    // (prepared and attached after this one), switching when it is ready, never compiling.
    [[nodiscard]] std::unique_ptr<CodeRunner> forTask(std::uint32_t slot) const override;

    bool runInit(LoadedProgram& program, Fault& fault) override;
    bool runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                    Fault& fault) override;
    void attach(LoadedProgram& program) override;
    // An online change's program: its native code is compiled here, before the swap, whatever
    // NativeStart says (the running program keeps running meanwhile). A program attached
    // without it (the first) is prepared by attach() with this runner's NativeStart.
    void prepare(LoadedProgram& program) const override;
    void setAbortFlag(const std::atomic<bool>* flag) override;
    void setDebugger(vm::Debugger* debugger) override;
    // Takes the native code of the attached program once its compile is done.
    void cycleBoundary() override;
    // Cancels the attached program's compile, if it runs: the run is stopping (off the cycle,
    // once the scan threads stopped). The compile's thread is joined when the job is freed.
    void cancelCompile() noexcept;
    // Also picks the tier of the cycle about to run (vm_runner.cpp, needsInterpreter).
    void setWallClock(std::int64_t wallNs) override;

    // Called on the compile thread when a background compile of a program prepared from now on
    // ends (not when it was cancelled because its program was replaced): `status` is what
    // executionStatus() will say once the program switches ("native" or "interpreter (native:
    // why not)"), `compileMs` the compile's wall-clock time. Set before the first prepare.
    using CompileListener = std::function<void(const std::string& status, double compileMs)>;
    void setCompileListener(CompileListener listener) { listener_ = std::move(listener); }

    // How the attached program runs: "interpreter", "native", "interpreter (native compiling)"
    // while its code is being compiled ("interpreter (native compiling, N of M POUs native)" once
    // part of it runs natively), or "interpreter (native: why not)"; empty before the first
    // attach. Any thread (runtime.status): nothing the scan thread waits for is locked.
    [[nodiscard]] std::string executionStatus() const;
    // Wall-clock milliseconds the native tier took to compile the attached program (0 when it
    // was not compiled, or not yet).
    [[nodiscard]] double nativeCompileMs() const;
    // The POUs whose machine code that compile generated, and those whose code it took from the
    // tier's code cache (an earlier compile's, of the same translation); 0 and 0 when it was not
    // compiled, or not yet.
    struct NativePous {
        std::uint32_t compiled = 0;
        std::uint32_t reused = 0;
    };
    [[nodiscard]] NativePous nativePous() const;
    // Program runs the interpreter made of a natively compiled program because a debugger needed
    // them (any thread).
    [[nodiscard]] std::uint64_t debugInterpretedRuns() const noexcept {
        return debugRuns_.load(std::memory_order_relaxed);
    }
    // Program runs the interpreter made of a program whose native code was not ready (or not
    // made: the tier refused it) when they began (any thread).
    [[nodiscard]] std::uint64_t runsBeforeNativeCode() const noexcept {
        return waitingRuns_.load(std::memory_order_relaxed);
    }
    // Calls the interpreter made into native code: of the POUs compiled while the program's
    // body itself was not yet (a part of the program, native_job.h), or while its body was
    // interpreted for another reason (any thread).
    [[nodiscard]] std::uint64_t callsRunNatively() const noexcept;

private:
    vm::Vm& vmFor(LoadedProgram& program);
    void prepareWith(LoadedProgram& program, NativeStart start) const;
    // Runs the job's code from now on if its compile is done (scan thread, or off the cycle).
    void takeCode() noexcept;

    std::uint64_t budget_;
    Execution execution_;
    NativeStart start_;
    CompileListener listener_;
    std::uint32_t slot_ = 0; // the call stack (LoadedProgram::stackBase) this runner's machine uses
    const std::atomic<bool>* abort_ = nullptr;
    vm::Debugger* debugger_ = nullptr;
    std::int64_t wallNs_ = 0;
    bool debugging_ = false; // this cycle interprets what the native tier compiled
    std::atomic<std::uint64_t> debugRuns_{0};
    std::atomic<std::uint64_t> waitingRuns_{0};
    std::unique_ptr<vm::Vm> vm_;
    // The attached program's compile (null on the interpreter) and, once taken, its code.
    std::shared_ptr<NativeJob> job_;
    const native::CompiledModule* native_ = nullptr;
    std::atomic<bool> switched_{false}; // native_ is set: the status reader's view of it
    // The newest code taken (a part of the program, or all of it): what the interpreter's calls
    // run where it has a POU's body (vm::CompiledCalls), with what they run it with.
    const NativePart* part_ = nullptr;
    std::atomic<std::uint32_t> partPous_{0}; // the POUs part_ has: the status reader's view
    struct CompiledCallState;
    std::unique_ptr<CompiledCallState> calls_;
    // The status reader's copy of job_ (swapped under the mutex by attach(), off the cycle).
    mutable std::mutex statusMutex_;
    std::shared_ptr<const NativeJob> statusJob_;
    bool statusAttached_ = false;
    const LoadedProgram* attached_ = nullptr;

    struct StatusView {
        bool attached = false;
        std::shared_ptr<const NativeJob> job;
    };
    [[nodiscard]] StatusView statusView() const; // a copy taken under statusMutex_
};

} // namespace takt::engine
