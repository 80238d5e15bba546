// The native tier on task threads: every TASK of a program with two or more runs the code the
// base runner compiled, each on its own call stack in the image, with the interpreter's results,
// and a call stack that overflows stops at its own end (StackOverflow naming the task), never in
// the next task's stack. Every test name holds "NativeTier" (ctest label `native`).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../engine/scan_test_support.h"
#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/engine/engine.h"
#include "takt/engine/program.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

// Two tasks, each walking a chain of method calls through an interface (which the compiler
// cannot check for recursion) with a 512-byte local in every frame. `DeepWalk` (task deep, 10 ms,
// call stack 1) walks 10 deeper each cycle until its frames pass the end of its 64 KB call stack
// (about 120 frames, below the call depth limit of 256, so the stack's end stops it, not the
// depth), where the stack of `OtherWalk` (task quick, 1 ms, call stack 2) begins; `OtherWalk` walks 30
// deep every cycle.
constexpr const char* kTwoTasks = R"(
INTERFACE INode
METHOD Walk : DINT
VAR_INPUT n : DINT; END_VAR
END_METHOD
END_INTERFACE
FUNCTION_BLOCK Node IMPLEMENTS INode
VAR_INPUT next : INode; END_VAR
METHOD Walk : DINT
VAR_INPUT n : DINT; END_VAR
VAR pad : ARRAY[0..63] OF LREAL; END_VAR
  pad[n MOD 64] := DINT_TO_LREAL(n);
  IF n <= 0 THEN
    Walk := 0;
  ELSE
    Walk := next.Walk(n - 1) + 1 + LREAL_TO_DINT(pad[n MOD 64]);
  END_IF;
END_METHOD
END_FUNCTION_BLOCK
PROGRAM OtherWalk
VAR a : Node; r : DINT; runs : DINT; END_VAR
a.next := a;
r := a.Walk(30);
runs := runs + 1;
END_PROGRAM
PROGRAM DeepWalk
VAR a : Node; depth : DINT; r : DINT; END_VAR
a.next := a;
depth := depth + 10;
r := a.Walk(depth);
END_PROGRAM
CONFIGURATION c RESOURCE res ON PLC
TASK deep(INTERVAL := T#10ms, PRIORITY := 2);
TASK quick(INTERVAL := T#1ms, PRIORITY := 1);
PROGRAM d WITH deep : DeepWalk;
PROGRAM o WITH quick : OtherWalk;
END_RESOURCE END_CONFIGURATION
)";

// Walk(n) = n + (1 + 2 + ... + n): one per level plus the level's pad value.
constexpr std::int32_t walkOf(std::int32_t n) {
    return n + n * (n + 1) / 2;
}

std::uint32_t offsetOf(const bytecode::Module& m, const std::string& path) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path == path) {
            return v.offset;
        }
    }
    ADD_FAILURE() << "no variable " << path;
    return 0;
}

std::int32_t dintAt(const LoadedProgram& p, const std::string& path) {
    std::int32_t value = 0;
    std::memcpy(&value, p.image() + offsetOf(p.module(), path), sizeof value);
    return value;
}

const bytecode::ProgramInstance& instanceOn(const bytecode::Module& m, std::uint32_t task) {
    for (const bytecode::ProgramInstance& i : m.programs) {
        if (i.task == task) {
            return i;
        }
    }
    ADD_FAILURE() << "no program on task " << task;
    return m.programs.front();
}

std::string statusOf(CodeRunner& runner) {
    return dynamic_cast<VmRunner&>(runner).executionStatus();
}

// The runners of both tasks on one program, called directly (no threads): each stack but the
// running task's keeps its bytes, and the overflow stops at the same call on both tiers.
struct TaskStacks {
    std::unique_ptr<LoadedProgram> program;
    std::unique_ptr<VmRunner> base;
    std::vector<std::unique_ptr<CodeRunner>> tasks;

    TaskStacks(const takt::test::CompiledText& compiled, Execution execution)
        : program(std::make_unique<LoadedProgram>(compiled.program.module, "")),
          base(std::make_unique<VmRunner>(0, execution)) {
        base->attach(*program);
        Fault fault;
        EXPECT_TRUE(program->module().initCode == bytecode::kNone || base->runInit(*program, fault));
        for (std::uint32_t t = 0; t < program->module().tasks.size(); ++t) {
            tasks.push_back(base->forTask(t + 1));
            tasks.back()->attach(*program);
        }
    }
    // The image past the state, but for call stack `slot`.
    std::vector<std::uint8_t> otherStacks(std::uint32_t slot) const {
        const std::uint8_t* image = program->image();
        const std::uint32_t size = program->module().stackSize;
        std::vector<std::uint8_t> out(image + program->stateSize(), image + program->stackBase(slot));
        out.insert(out.end(), image + program->stackBase(slot) + size, image + program->imageSize());
        return out;
    }
};

TEST(NativeTierTaskStacks, EachTaskRunsTheCompiledCodeOnItsOwnStackAndOverflowsAtItsEnd) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const takt::test::CompiledText compiled = takt::test::compileText(kTwoTasks);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    TaskStacks interp(compiled, Execution::Interpreter);
    TaskStacks nat(compiled, Execution::Native);
    ASSERT_EQ(nat.program->stackCount(), 3u);
    ASSERT_EQ(statusOf(*nat.base), "native");
    ASSERT_EQ(statusOf(*nat.tasks[0]), "native");
    ASSERT_EQ(statusOf(*nat.tasks[1]), "native");
    const bytecode::Module& m = *compiled.program.module;
    const bytecode::ProgramInstance& deep = instanceOn(m, 0);
    const bytecode::ProgramInstance& other = instanceOn(m, 1);
    Fault fi;
    Fault fn;
    int cycle = 0;
    for (; cycle < 40; ++cycle) {
        takt::test::scribbleStack(*interp.program, static_cast<std::uint8_t>(0x5A + cycle));
        takt::test::scribbleStack(*nat.program, static_cast<std::uint8_t>(0xA5 - cycle));
        ASSERT_TRUE(interp.tasks[1]->runProgram(*interp.program, other, cycle, fi)) << fi.message;
        ASSERT_TRUE(nat.tasks[1]->runProgram(*nat.program, other, cycle, fn)) << fn.message;
        const std::vector<std::uint8_t> aside = nat.otherStacks(1);
        const bool okInterp = interp.tasks[0]->runProgram(*interp.program, deep, cycle, fi);
        const bool okNative = nat.tasks[0]->runProgram(*nat.program, deep, cycle, fn);
        ASSERT_EQ(okNative, okInterp) << "cycle " << cycle << ": " << fn.message << " / " << fi.message;
        ASSERT_EQ(nat.otherStacks(1), aside) << "task deep wrote outside its call stack, cycle " << cycle;
        if (!okNative) {
            break;
        }
        ASSERT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program)) << "cycle " << cycle;
        ASSERT_EQ(dintAt(*nat.program, "d.r"), walkOf(dintAt(*nat.program, "d.depth")));
    }
    ASSERT_LT(cycle, 40) << "the deep task never overflowed";
    EXPECT_EQ(fn.message, vm::trapMessage(vm::Trap::StackOverflow));
    EXPECT_EQ(fn.pou, fi.pou);
    EXPECT_EQ(fn.codeOffset, fi.codeOffset);
    // Its 64 KB stack ended it, not the call depth limit (256 calls).
    EXPECT_LT(dintAt(*nat.program, "d.depth"), static_cast<std::int32_t>(bytecode::kMaxCallDepth));
    EXPECT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program));
    EXPECT_EQ(dintAt(*nat.program, "o.r"), walkOf(30));
}

// A timer in a task: the compiled code calls the standard FB with the context of the task's own
// machine, whose cycle time is the task's (the base runner's machine never runs here, and the
// other task's runs at time 0).
constexpr const char* kTimerTasks = R"(
PROGRAM Idle
VAR n : DINT; END_VAR
n := n + 1;
END_PROGRAM
PROGRAM Timed
VAR t : TON; q : BOOL; et : TIME; END_VAR
t(IN := TRUE, PT := T#5ms);
q := t.Q;
et := t.ET;
END_PROGRAM
CONFIGURATION c RESOURCE res ON PLC
TASK slow(INTERVAL := T#10ms, PRIORITY := 2);
TASK fast(INTERVAL := T#1ms, PRIORITY := 1);
PROGRAM i WITH slow : Idle;
PROGRAM tm WITH fast : Timed;
END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierTaskStacks, ATaskTimerRunsOnTheTasksOwnCycleTime) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const takt::test::CompiledText compiled = takt::test::compileText(kTimerTasks);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    TaskStacks interp(compiled, Execution::Interpreter);
    TaskStacks nat(compiled, Execution::Native);
    ASSERT_EQ(statusOf(*nat.tasks[1]), "native");
    const bytecode::Module& m = *compiled.program.module;
    const bytecode::ProgramInstance& idle = instanceOn(m, 0);
    const bytecode::ProgramInstance& timed = instanceOn(m, 1);
    constexpr std::int64_t kMs = 1'000'000;
    Fault f;
    for (int cycle = 0; cycle < 8; ++cycle) {
        for (TaskStacks* run : {&interp, &nat}) {
            ASSERT_TRUE(run->tasks[0]->runProgram(*run->program, idle, 0, f)) << f.message;
            ASSERT_TRUE(run->tasks[1]->runProgram(*run->program, timed, cycle * kMs, f)) << f.message;
        }
        ASSERT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program)) << "cycle " << cycle;
    }
    EXPECT_EQ(nat.program->image()[offsetOf(m, "tm.q")], 1) << "the 5 ms timer elapsed by 7 ms";
}

// What one run on real task threads ended with.
struct ThreadedRun {
    std::string status;     // the task runners' (both the same)
    std::string baseStatus; // runtime.status's `execution`
    FaultRecord fault;
    std::int32_t deepDepth = 0;
    std::int32_t otherR = 0;
    std::int32_t otherRuns = 0;
    std::string deepTask; // its name as the module holds it
};

void runThreaded(Execution execution, ThreadedRun& out) {
    const takt::test::CompiledText compiled = takt::test::compileText(kTwoTasks);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    CycleClock clock;
    auto runner = std::make_unique<VmRunner>(0, execution);
    VmRunner& base = *runner;
    Engine engine(std::move(runner), clock);
    FaultReport report;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(compiled.program.module, ""), report)) << report.message;
    testing::FakeIo io;
    ScanOptions options;
    options.periodNs = 1'000'000;
    options.faultPolicy = FaultAction::SafeHalt;
    ScanLoop loop(engine, clock, io, options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(engine.taskThreads());
    out.baseStatus = base.executionStatus();
    out.status = statusOf(engine.taskRunner(0));
    EXPECT_EQ(statusOf(engine.taskRunner(1)), out.status);
    const bool halted = testing::waitFor([&] { return loop.snapshot().state == ScanState::Halted; });
    loop.stop();
    ASSERT_TRUE(halted) << "the deep task never overflowed";
    const std::optional<FaultRecord> rec = loop.lastFault();
    ASSERT_TRUE(rec.has_value());
    out.fault = *rec;
    out.deepTask = engine.program().module().tasks[0].name;
    out.deepDepth = dintAt(engine.program(), "d.depth");
    out.otherR = dintAt(engine.program(), "o.r");
    out.otherRuns = dintAt(engine.program(), "o.runs");
}

TEST(NativeTierTaskThreads, TasksRunNativeOnTheirOwnStacksAndAnOverflowNamesItsTask) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    ThreadedRun interp;
    ThreadedRun nat;
    ASSERT_NO_FATAL_FAILURE(runThreaded(Execution::Interpreter, interp));
    ASSERT_NO_FATAL_FAILURE(runThreaded(Execution::Native, nat));
    EXPECT_EQ(interp.status, "interpreter");
    EXPECT_EQ(nat.status, "native");
    EXPECT_EQ(nat.baseStatus, "native");
    // The deep task stopped at the same call on both tiers, named, with its stack's own end.
    EXPECT_EQ(nat.fault.kind, "runtime");
    const std::string expected = std::string(vm::trapMessage(vm::Trap::StackOverflow));
    EXPECT_NE(nat.fault.report.message.find(expected), std::string::npos) << nat.fault.report.message;
    EXPECT_NE(nat.fault.report.message.find("task " + nat.deepTask), std::string::npos) << nat.fault.report.message;
    EXPECT_EQ(nat.fault.report.message, interp.fault.report.message);
    EXPECT_EQ(nat.fault.report.pou, interp.fault.report.pou);
    EXPECT_EQ(nat.fault.report.line, interp.fault.report.line);
    EXPECT_EQ(nat.deepDepth, interp.deepDepth);
    EXPECT_LT(nat.deepDepth, static_cast<std::int32_t>(bytecode::kMaxCallDepth));
    // The quick task walked beside it the whole time, on its own stack, with the right values.
    EXPECT_GT(nat.otherRuns, 20);
    EXPECT_EQ(nat.otherR, walkOf(30));
    EXPECT_EQ(interp.otherR, walkOf(30));
}

} // namespace
} // namespace takt::engine
