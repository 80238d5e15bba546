// A program moves to native code a POU at a time: a background compile links its POUs in waves,
// callees first (runtime/native/src/wave_linker.h), and each runner takes the newest wave at its
// next cycle boundary. Until the program's own body is compiled the interpreter runs it, and its
// calls of the POUs compiled so far run their native code, with the same instance, frame, call
// depth, watchdog and traps. The compile is held after its first wave in these tests
// (NativeJob::setAfterPartForTests), so the mixed phase is seen whatever the machine's speed.
// Every test name holds "NativeTier" (ctest label `native`).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../../runtime/engine/src/native_job.h"
#include "native_calls_program.h"
#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/bytecode/opcodes.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

// Holds a background compile each time it published a part, until released (then lets every
// later part through); bounded by the cancel flag and 60 s.
class PartGate {
public:
    PartGate() {
        NativeJob::setAfterPartForTests([this](const std::atomic<bool>& cancel) { hold(cancel); });
    }
    ~PartGate() {
        NativeJob::setAfterPartForTests({});
        release();
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::seconds(60), [&] { return holding_ == 0; });
    }
    PartGate(const PartGate&) = delete;
    PartGate& operator=(const PartGate&) = delete;

    void release() {
        const std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    // Waits until a compile holds here (bounded).
    bool holding() {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(60), [&] { return holding_ > 0; });
    }

private:
    void hold(const std::atomic<bool>& cancel) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++holding_;
        changed_.notify_all();
        for (int i = 0; i < 6000 && !open_ && !cancel.load(); ++i) {
            changed_.wait_for(lock, std::chrono::milliseconds(10));
        }
        --holding_;
        changed_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
    int holding_ = 0;
};

std::uint32_t pouNamed(const bytecode::Module& module, const std::string& name) {
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        if (module.pous[p].name == name) {
            return p;
        }
    }
    return bytecode::kNone;
}

bool compiledBody(const bytecode::PouEntry& pou) {
    return pou.code != bytecode::kNone && pou.native == bytecode::kNone;
}

// The POUs with a body the native tier compiles.
std::uint32_t bodies(const bytecode::Module& module) {
    std::uint32_t n = 0;
    for (const bytecode::PouEntry& pou : module.pous) {
        n += compiledBody(pou) ? 1 : 0;
    }
    return n;
}

// Every instruction of POU `p`'s body.
template <typename Visit> void eachInstruction(const bytecode::Module& module, std::uint32_t p, Visit visit) {
    const bytecode::PouEntry& pou = module.pous[p];
    for (std::uint32_t pc = pou.code; pc < pou.codeEnd; pc += bytecode::kOpcodeInfo[module.code[pc]].length) {
        visit(static_cast<bytecode::Opcode>(module.code[pc]), pc);
    }
}

class NativeTierParts : public ::testing::Test {
protected:
    void SetUp() override {
        if (!native::available()) {
            GTEST_SKIP() << "takt built without the native tier";
        }
    }
    void compile(const char* source) {
        compiled = takt::test::compileText(source);
        ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    }
    [[nodiscard]] const bytecode::Module& module() const { return *compiled.program.module; }

    takt::test::CompiledText compiled;
};

TEST_F(NativeTierParts, WavesComeCalleesFirstWithTheDispatchingPousInTheLast) {
    ASSERT_NO_FATAL_FAILURE(compile(kCalls));
    std::vector<std::uint8_t> image(vm::Vm::requiredImageSize(module()));
    const vm::Vm machine(module(), image);
    std::vector<std::shared_ptr<const native::CompiledModule>> parts;
    const native::PartListener onPart = [&parts](std::shared_ptr<const native::CompiledModule> code) {
        parts.push_back(std::move(code));
    };
    const native::CompileResult whole = native::compile(module(), directFbsOf(machine), {}, nullptr, 0, &onPart);
    ASSERT_NE(whole.code, nullptr) << whole.error;
    ASSERT_GE(parts.size(), 2U) << "a program of " << bodies(module()) << " bodies links in waves";
    std::uint32_t before = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const native::CompiledModule& part = *parts[k];
        std::uint32_t count = 0;
        for (std::uint32_t p = 0; p < module().pous.size(); ++p) {
            if (part.entry(p) == nullptr) {
                continue;
            }
            ++count;
            EXPECT_EQ(part.entry(p), whole.code->entry(p)) << module().pous[p].name << ": linked once, in its wave";
            eachInstruction(module(), p, [&](bytecode::Opcode op, std::uint32_t pc) {
                EXPECT_NE(op, bytecode::Opcode::CALL_IFACE) << module().pous[p].name << " dispatches, in part " << k;
                EXPECT_NE(op, bytecode::Opcode::CALL_VIRT) << module().pous[p].name << " dispatches, in part " << k;
                if (op == bytecode::Opcode::CALL_FN || op == bytecode::Opcode::CALL_FB) {
                    const std::uint32_t callee = module().code[pc + 1];
                    EXPECT_TRUE(!compiledBody(module().pous[callee]) || part.entry(callee) != nullptr)
                        << module().pous[p].name << " calls " << module().pous[callee].name << ", not in part " << k;
                }
            });
        }
        EXPECT_GT(count, before) << "part " << k << " adds POUs";
        before = count;
    }
    for (const char* dispatching : {"p", "Rect.Twice"}) {
        const std::uint32_t p = pouNamed(module(), dispatching);
        ASSERT_NE(p, bytecode::kNone) << dispatching;
        EXPECT_EQ(parts.back()->entry(p), nullptr) << dispatching << " needs the dispatch tables: the last wave";
        EXPECT_NE(whole.code->entry(p), nullptr) << dispatching;
    }
    for (std::uint32_t p = 0; p < module().pous.size(); ++p) {
        EXPECT_EQ(whole.code->entry(p) != nullptr, compiledBody(module().pous[p])) << module().pous[p].name;
    }
}

// The runner of a background compile held after its first part, and the interpreter's twin.
struct MixedRun {
    std::unique_ptr<LoadedProgram> mixed;
    std::unique_ptr<LoadedProgram> twin;
    std::unique_ptr<VmRunner> runner;
    std::unique_ptr<VmRunner> interpreter;
};

MixedRun startMixed(const takt::test::CompiledText& compiled, std::uint64_t budget) {
    MixedRun r;
    r.mixed = std::make_unique<LoadedProgram>(compiled.program.module, "");
    r.twin = std::make_unique<LoadedProgram>(compiled.program.module, "");
    r.runner = std::make_unique<VmRunner>(budget, Execution::Native, NativeStart::Background);
    r.interpreter = std::make_unique<VmRunner>(budget, Execution::Interpreter);
    r.runner->attach(*r.mixed);
    r.interpreter->attach(*r.twin);
    Fault fault;
    EXPECT_TRUE(compiled.program.module->initCode == bytecode::kNone || r.runner->runInit(*r.mixed, fault));
    EXPECT_TRUE(compiled.program.module->initCode == bytecode::kNone || r.interpreter->runInit(*r.twin, fault));
    return r;
}

TEST_F(NativeTierParts, APartRunsNativelyUnderTheInterpretedProgramWithTheSameImageEveryCycle) {
    ASSERT_NO_FATAL_FAILURE(compile(kCalls));
    PartGate gate;
    MixedRun run = startMixed(compiled, 0);
    ASSERT_TRUE(gate.holding()) << "no part was published";
    const bytecode::ProgramInstance& inst = module().programs.front();
    const std::string of = " of " + std::to_string(bodies(module())) + " POUs native)";
    Fault f;
    std::int64_t now = 0;
    const auto cycle = [&](int c) {
        run.runner->cycleBoundary();
        ASSERT_TRUE(run.runner->runProgram(*run.mixed, inst, now, f)) << f.message;
        ASSERT_TRUE(run.interpreter->runProgram(*run.twin, inst, now, f)) << f.message;
        ASSERT_EQ(takt::test::stateOf(*run.mixed), takt::test::stateOf(*run.twin)) << "cycle " << c;
        now += 1'000'000;
    };
    for (int c = 0; c < 30; ++c) {
        ASSERT_NO_FATAL_FAILURE(cycle(c));
    }
    const std::string status = run.runner->executionStatus();
    EXPECT_EQ(status.rfind("interpreter (native compiling, ", 0), 0U) << status;
    EXPECT_NE(status.find(of), std::string::npos) << status;
    EXPECT_EQ(run.runner->runsBeforeNativeCode(), 30U) << "the program's body ran on the interpreter";
    const std::uint64_t callsHeld = run.runner->callsRunNatively();
    EXPECT_GE(callsHeld, 30U) << "the first wave's POUs ran natively, called at least once a cycle";

    gate.release();
    int c = 30;
    for (; c < 3030 && run.runner->executionStatus() != "native"; ++c) {
        ASSERT_NO_FATAL_FAILURE(cycle(c));
        std::this_thread::sleep_for(std::chrono::milliseconds(10)); // 30 s at most, for the sanitizers
    }
    ASSERT_EQ(run.runner->executionStatus(), "native");
    const std::uint64_t callsAtTheSwitch = run.runner->callsRunNatively();
    EXPECT_GE(callsAtTheSwitch, callsHeld);
    for (int k = 0; k < 20; ++k) {
        ASSERT_NO_FATAL_FAILURE(cycle(c + k));
    }
    EXPECT_EQ(run.runner->callsRunNatively(), callsAtTheSwitch) << "the whole program runs natively: no call from "
                                                                   "the interpreter";
}

// Cycles of `source` on a runner held after its first part and on the interpreter, up to the
// cycle where both must fault, with the same fault and image; `native` is the POU the first
// part holds, whose calls must have run natively.
void expectSameFaultFromAPart(const char* source, std::uint64_t budget, int faultCycle, const char* native) {
    const takt::test::CompiledText compiled = takt::test::compileText(source);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    PartGate gate;
    MixedRun run = startMixed(compiled, budget);
    ASSERT_TRUE(gate.holding()) << "no part was published";
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    Fault fm;
    Fault fi;
    for (int c = 1; c <= faultCycle; ++c) {
        run.runner->cycleBoundary();
        const bool last = c == faultCycle;
        ASSERT_EQ(run.runner->runProgram(*run.mixed, inst, c, fm), !last) << "partly native, cycle " << c;
        ASSERT_EQ(run.interpreter->runProgram(*run.twin, inst, c, fi), !last) << "interpreter, cycle " << c;
    }
    EXPECT_GT(run.runner->callsRunNatively(), 0U) << native << " did not run natively";
    EXPECT_EQ(fm.message, fi.message);
    EXPECT_EQ(fm.pou, fi.pou);
    EXPECT_EQ(compiled.program.module->pous[fm.pou].name, native);
    EXPECT_EQ(fm.codeOffset, fi.codeOffset);
    const FaultReport rm = run.mixed->describe(fm);
    const FaultReport ri = run.twin->describe(fi);
    EXPECT_EQ(rm.line, ri.line);
    EXPECT_EQ(rm.column, ri.column);
    EXPECT_EQ(takt::test::stateOf(*run.mixed), takt::test::stateOf(*run.twin));
}

TEST_F(NativeTierParts, ATrapInANativelyCalledPouIsTheInterpretersTrap) {
    // Div is the one leaf: the first wave. It divides by zero in the third cycle.
    expectSameFaultFromAPart(R"(
FUNCTION_BLOCK Div
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := 100 / (3 - x);
END_FUNCTION_BLOCK
PROGRAM p
VAR n, sum : DINT; d : Div; END_VAR
n := n + 1;
d(x := n);
sum := sum + d.y;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                             0, 3, "Div");
}

TEST_F(NativeTierParts, TheWatchdogCountsTheTicksOfNativelyCalledPousWithTheProgramsOwn) {
    // Three calls a cycle of n * 400 loop trips each: the budget of 5000 ticks a run is exceeded
    // in cycle 5 (6000 trips) when the calls' ticks count with the program's; were each call
    // given the budget afresh, in cycle 13.
    expectSameFaultFromAPart(R"(
FUNCTION_BLOCK Spin
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT i : DINT; END_VAR
i := 0;
WHILE i < x * 400 DO i := i + 1; END_WHILE;
END_FUNCTION_BLOCK
PROGRAM p
VAR n : DINT; s : Spin; k : INT; END_VAR
n := n + 1;
FOR k := 1 TO 3 DO s(x := n); END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                             5000, 5, "Spin");
}

} // namespace
} // namespace takt::engine
