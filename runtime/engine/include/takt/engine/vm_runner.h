#pragma once
// The CodeRunner that executes bytecode with the takt VM: the interpreter, or the native tier
// (takt/native/native.h) where it compiled the program, with the interpreter as its fallback.
// The native tier cannot halt: while the thread's debugger needs to halt it (a debug session with
// a breakpoint, an exception filter, a step or a pause), the runner's cycles run the same
// program on the interpreter, on the same image, and run native again once it does not; the
// choice is made once per cycle, before its first program.
#include <atomic>
#include <cstdint>
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

// The standard FBs of `machine`'s module as the native tier calls them (one per POU).
[[nodiscard]] std::vector<native::DirectFb> directFbsOf(const vm::Vm& machine);

// runtime.status's `execution` for a program the native tier did not compile: "interpreter
// (native: unsupported OP at POU:line)" or "interpreter (native: <library error>)".
[[nodiscard]] std::string nativeFallbackStatus(const LoadedProgram& program, const native::CompileResult& result);

class VmRunner final : public CodeRunner {
public:
    // `budget`: watchdog ticks (back-edges and calls) per program run; 0 = unlimited.
    // `execution` Native compiles each program in prepare() (off the cycle); a program the
    // native tier cannot compile runs on the interpreter, which executionStatus() says.
    explicit VmRunner(std::uint64_t budget = 0, Execution execution = Execution::Interpreter);
    ~VmRunner() override;

    // A task thread's runner: call stack `slot`, same budget and execution, a machine of its
    // own. With Execution::Native it runs the code this runner compiled for the same program
    // (prepared and attached after this one: vm_runner.cpp, SharedCode), never compiling.
    [[nodiscard]] std::unique_ptr<CodeRunner> forTask(std::uint32_t slot) const override;

    bool runInit(LoadedProgram& program, Fault& fault) override;
    bool runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                    Fault& fault) override;
    void attach(LoadedProgram& program) override;
    void prepare(LoadedProgram& program) const override;
    void setAbortFlag(const std::atomic<bool>* flag) override;
    void setDebugger(vm::Debugger* debugger) override;
    // Also picks the tier of the cycle about to run (vm_runner.cpp, needsInterpreter).
    void setWallClock(std::int64_t wallNs) override;

    // How the attached program runs: "interpreter", "native", or "interpreter (native: why
    // not)"; empty before the first attach. Any thread (runtime.status): a copy under a lock
    // that attach() holds only to swap.
    [[nodiscard]] std::string executionStatus() const;
    // Wall-clock milliseconds the native tier took to compile the attached program (0 when it
    // was not compiled).
    [[nodiscard]] double nativeCompileMs() const;
    // Program runs the interpreter made of a natively compiled program because a debugger needed
    // them (any thread).
    [[nodiscard]] std::uint64_t debugInterpretedRuns() const noexcept {
        return debugRuns_.load(std::memory_order_relaxed);
    }

private:
    vm::Vm& vmFor(LoadedProgram& program);

    std::uint64_t budget_;
    Execution execution_;
    std::uint32_t slot_ = 0; // the call stack (LoadedProgram::stackBase) this runner's machine uses
    const std::atomic<bool>* abort_ = nullptr;
    vm::Debugger* debugger_ = nullptr;
    std::int64_t wallNs_ = 0;
    bool debugging_ = false; // this cycle interprets what the native tier compiled
    std::atomic<std::uint64_t> debugRuns_{0};
    std::unique_ptr<vm::Vm> vm_;
    std::unique_ptr<native::CompiledModule> native_;
    mutable std::mutex statusMutex_;
    std::string status_;
    double compileMs_ = 0;
    const LoadedProgram* attached_ = nullptr;
};

} // namespace takt::engine
