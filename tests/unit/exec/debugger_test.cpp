// The debugger's runtime half on compiled ST (takt/vm/debug.h): a line breakpoint halts the thread
// that runs the program at that statement, before it runs, with the call chain and its instances;
// another thread reads the halted image and resumes it, continuing or stepping.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <future>
#include <thread>

#include "st_runner.h"
#include "takt/vm/debug.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;
using testing::offsetOf;
using testing::pouNamed;

// Line numbers below are those of this text (line 1 is the empty line after R"().
const char* const kSource = R"(
FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR total : DINT; calls : DINT; END_VAR
  calls := calls + 1;
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM Main
  VAR acc : Accum; i : DINT; done : DINT; END_VAR
  FOR i := 1 TO 3 DO
    acc(x := i);
  END_FOR;
  done := done + 1;
END_PROGRAM
)";
constexpr std::uint32_t kLineCalls = 5;
constexpr std::uint32_t kLineTotal = 6;
constexpr std::uint32_t kLineFor = 11;
constexpr std::uint32_t kLineCall = 12;
constexpr std::uint32_t kLineDone = 14;

std::int64_t deadlineIn(std::int64_t seconds) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (static_cast<std::int64_t>(ts.tv_sec) + seconds) * 1'000'000'000 + ts.tv_nsec;
}

std::uint32_t fileOf(const bytecode::Module& m) {
    for (std::uint32_t i = 0; i < m.files.size(); ++i) {
        if (m.files[i].find("main.st") != std::string::npos) {
            return i;
        }
    }
    ADD_FAILURE() << "no main.st in the module";
    return 0;
}

// One program run with the debugger on a thread of its own, as a task runs it.
struct Session {
    explicit Session(Runner& r) : runner(r), stops(r.module()), dbg(stops) {
        r.vm().setDebugger(&dbg);
        dbg.attach();
    }
    void setLine(std::uint32_t line, bool on = true) {
        const vm::ResolvedLine rl = vm::resolveLine(runner.module(), fileOf(runner.module()), line);
        ASSERT_TRUE(rl.verified) << rl.reason;
        for (std::uint32_t pc : rl.pcs) {
            ASSERT_TRUE(stops.setBreakpoint(pc, on));
        }
    }
    void startCycle() {
        cycle = std::async(std::launch::async, [this] { return runner.cycle(); });
    }
    // Waits for the next halt; the line and depth it halted at.
    [[nodiscard]] bool waitHalt() {
        if (!dbg.waitHalted(seen, deadlineIn(10))) {
            return false;
        }
        seen = dbg.haltCount();
        return dbg.halted();
    }
    [[nodiscard]] std::uint32_t line() const { return vm::sourceAt(runner.module(), dbg.frames().back().pc).line; }
    [[nodiscard]] std::size_t depth() const { return dbg.frames().size() - 1; }
    vm::Trap finish() {
        EXPECT_EQ(cycle.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        return cycle.get();
    }

    Runner& runner;
    vm::StopMap stops;
    vm::Debugger dbg;
    std::uint32_t seen = 0;
    std::future<vm::Trap> cycle;
};

// A run on a thread with an attached debugger is counted (odd while under way, halted too), so
// the control thread knows when what it unlinked from the stop map can go; a run while detached
// is not.
TEST(Debugger, RunsWhileAttachedAreCounted) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    vm::StopMap stops(r.module());
    vm::Debugger dbg(stops);
    r.vm().setDebugger(&dbg);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(dbg.runCount(), 0u) << "detached: nothing to count";
    dbg.attach();
    ASSERT_EQ(r.cycle(), vm::Trap::None); // attached, nothing set: the plain loop
    const std::uint32_t perCycle = dbg.runCount();
    EXPECT_GT(perCycle, 0u);
    EXPECT_EQ(perCycle % 2, 0u);
    const vm::ResolvedLine call = vm::resolveLine(r.module(), fileOf(r.module()), kLineCall);
    ASSERT_TRUE(call.verified) << call.reason;
    ASSERT_TRUE(stops.setBreakpoint(call.pcs.front(), true));
    auto cycle = std::async(std::launch::async, [&r] { return r.cycle(); });
    ASSERT_TRUE(dbg.waitHalted(0, deadlineIn(10)));
    EXPECT_EQ(dbg.runCount() % 2, 1u) << "halted inside a run";
    stops.clearBreakpoints();
    ASSERT_TRUE(dbg.resume(vm::StepMode::None));
    ASSERT_EQ(cycle.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(cycle.get(), vm::Trap::None);
    EXPECT_EQ(dbg.runCount(), 2 * perCycle);
    EXPECT_FALSE(dbg.inRun());
}

TEST(Debugger, LineResolvesToTheNextStatementOrSaysWhyNot) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    const std::uint32_t file = fileOf(r.module());
    const vm::ResolvedLine decl = vm::resolveLine(r.module(), file, 3); // VAR_INPUT: moves on
    ASSERT_TRUE(decl.verified) << decl.reason;
    EXPECT_EQ(decl.line, kLineCalls);
    ASSERT_EQ(decl.pcs.size(), 1u);
    EXPECT_EQ(vm::pouAt(r.module(), decl.pcs[0]), pouNamed(r.module(), "Accum"));
    const vm::ResolvedLine endFor = vm::resolveLine(r.module(), file, 13); // END_FOR
    ASSERT_TRUE(endFor.verified);
    EXPECT_EQ(endFor.line, kLineDone);
    const vm::ResolvedLine past = vm::resolveLine(r.module(), file, 15);
    EXPECT_FALSE(past.verified);
    EXPECT_NE(past.reason.find("no statement at or after line 15"), std::string::npos) << past.reason;
    EXPECT_TRUE(past.pcs.empty());
}

TEST(Debugger, BreakpointInAnFbCalledInALoopHaltsOnEveryCallWithTheCallChain) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    s.setLine(kLineTotal);
    s.startCycle();
    const bytecode::Module& m = r.module();
    for (std::int32_t call = 1; call <= 3; ++call) {
        ASSERT_TRUE(s.waitHalt()) << "call " << call;
        EXPECT_EQ(s.dbg.reason(), vm::HaltReason::Breakpoint);
        ASSERT_EQ(s.dbg.frames().size(), 2u);
        const vm::HaltFrame& main = s.dbg.frames()[0];
        const vm::HaltFrame& fb = s.dbg.frames()[1];
        EXPECT_EQ(main.pou, pouNamed(m, "Main"));
        EXPECT_EQ(main.thisOffset, m.programs[0].offset);
        EXPECT_EQ(vm::sourceAt(m, main.pc).line, kLineCall);
        EXPECT_EQ(fb.pou, pouNamed(m, "Accum"));
        EXPECT_EQ(fb.thisOffset, offsetOf(m, "Main.acc"));
        EXPECT_EQ(s.line(), kLineTotal);
        // Halted before line 6: line 5 of this call ran, line 6 did not.
        EXPECT_EQ(r.get<std::int32_t>("Main.acc.calls"), call);
        EXPECT_EQ(r.get<std::int32_t>("Main.acc.total"), call * (call - 1) / 2);
        EXPECT_EQ(r.get<std::int32_t>("Main.done"), 0);
        ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    }
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.total"), 6);
    EXPECT_EQ(r.get<std::int32_t>("Main.done"), 1);
    EXPECT_FALSE(s.dbg.halted());
}

TEST(Debugger, AValueWrittenWhileHaltedIsWhatTheProgramRunsOn) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    s.setLine(kLineDone);
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    r.set<std::int32_t>("Main.done", 41);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.done"), 42);
}

TEST(Debugger, StepIntoOverAndOut) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    s.setLine(kLineCall);
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineCall);
    s.setLine(kLineCall, false); // from here on only steps halt
    // Into the FB: its first statement, one level down.
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Into));
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.dbg.reason(), vm::HaltReason::Step);
    EXPECT_EQ(s.line(), kLineCalls);
    EXPECT_EQ(s.depth(), 1u);
    // Over, inside the FB: the next line of the same call.
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Over));
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineTotal);
    EXPECT_EQ(s.depth(), 1u);
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.calls"), 1);
    // Out: back in Main at its next statement (the call of the second iteration).
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Out));
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineCall);
    EXPECT_EQ(s.depth(), 0u);
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.total"), 1);
    EXPECT_EQ(r.get<std::int32_t>("Main.i"), 2);
    // Over the call: the FB runs whole, the loop comes round to the call of the third iteration.
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Over));
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineCall);
    EXPECT_EQ(s.depth(), 0u);
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.calls"), 2);
    EXPECT_EQ(r.get<std::int32_t>("Main.i"), 3);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Over));
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineDone);
    // Over the last statement: the run ends; the step halts at the first statement of the next run.
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::Over));
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.done"), 1);
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), kLineFor);
    EXPECT_EQ(s.depth(), 0u);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.done"), 2);
}

TEST(Debugger, PauseHaltsAtTheNextStatement) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    s.dbg.pause();
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.dbg.reason(), vm::HaltReason::Pause);
    EXPECT_EQ(s.line(), kLineFor);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    EXPECT_EQ(s.finish(), vm::Trap::None);
}

// A session that goes away must not leave the thread halted: detach resumes it and no
// breakpoint halts a detached debugger's thread.
TEST(Debugger, DetachResumesAndADetachedDebuggerNeverHalts) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    s.setLine(kLineTotal);
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    s.dbg.detach();
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.calls"), 3);
    EXPECT_EQ(s.dbg.haltCount(), 1u);
    ASSERT_TRUE(s.stops.hasBreakpoint(vm::resolveLine(r.module(), fileOf(r.module()), kLineTotal).pcs[0]));
    EXPECT_EQ(r.cycle(), vm::Trap::None); // breakpoint still set, debugger detached: runs through
    EXPECT_EQ(r.get<std::int32_t>("Main.acc.calls"), 6);
    EXPECT_EQ(s.dbg.haltCount(), 1u);
}

TEST(Debugger, BreakpointsOnlyAtStatementStarts) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    vm::StopMap stops(r.module());
    const std::uint32_t pc = vm::resolveLine(r.module(), fileOf(r.module()), kLineTotal).pcs[0];
    EXPECT_FALSE(stops.setBreakpoint(pc + 1, true)); // an operand word
    EXPECT_FALSE(stops.setBreakpoint(static_cast<std::uint32_t>(r.module().code.size()), true));
    EXPECT_EQ(stops.breakpointCount(), 0u);
    EXPECT_TRUE(stops.setBreakpoint(pc, true));
    EXPECT_TRUE(stops.setBreakpoint(pc, true));
    EXPECT_EQ(stops.breakpointCount(), 1u);
    stops.clearBreakpoints();
    EXPECT_EQ(stops.breakpointCount(), 0u);
    EXPECT_FALSE(stops.hasBreakpoint(pc));
}

// Breakpoints alone run the plain loop on a copy of the code with kBreakpointOpcode at each
// breakpoint's instruction (as fast as without a debugger until one is reached); a step, a pause or
// flow control take the loop that looks every instruction up. Removing the breakpoint restores the
// instruction; the module's own code is never written.
TEST(Debugger, BreakpointsAlonePatchACopyOfTheCodeForThePlainLoop) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Session s(r);
    EXPECT_EQ(s.dbg.plainCode(), nullptr); // no breakpoint yet: no copy
    const vm::ResolvedLine line = vm::resolveLine(r.module(), fileOf(r.module()), kLineDone);
    ASSERT_TRUE(line.verified);
    const std::uint32_t pc = line.pcs.front();
    const std::uint32_t original = r.module().code[pc];
    s.setLine(kLineDone);
    const std::uint32_t* patched = s.dbg.plainCode();
    ASSERT_NE(patched, nullptr);
    EXPECT_EQ(patched[pc], vm::kBreakpointOpcode);
    EXPECT_EQ(r.module().code[pc], original);
    EXPECT_TRUE(std::equal(patched, patched + pc, r.module().code.begin()));
    s.dbg.pause();
    EXPECT_EQ(s.dbg.plainCode(), nullptr); // a pause needs every statement start
    s.startCycle();
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.dbg.reason(), vm::HaltReason::Pause);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    ASSERT_TRUE(s.waitHalt()); // on to the breakpoint, in the same run
    EXPECT_EQ(s.line(), kLineDone);
    EXPECT_EQ(s.dbg.reason(), vm::HaltReason::Breakpoint);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(s.dbg.plainCode(), patched);
    s.setLine(kLineDone, false);
    EXPECT_EQ(patched[pc], original);
    s.startCycle();
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.done"), 2);
}

// A breakpoint set while a run goes on in the plain loop on the patched code halts that same run
// when it gets there: the copy is patched in place.
TEST(Debugger, ABreakpointSetDuringARunOnThePatchedCodeHaltsThatRun) {
    const char* const text = R"(
PROGRAM Main
  VAR n : DINT; after : DINT; END_VAR
  WHILE n < 50000000 DO
    n := n + 1;
  END_WHILE;
  after := after + 1;
  IF n < 0 THEN
    after := 100;
  END_IF;
END_PROGRAM
)";
    Runner r(text);
    ASSERT_TRUE(r.ok) << r.errors();
    r.vm().setBudget(0);
    Session s(r);
    s.setLine(9); // never reached: it only makes the run take the patched code
    ASSERT_NE(s.dbg.plainCode(), nullptr);
    s.startCycle();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s.setLine(7); // after the loop, which has 50 million turns to go through
    ASSERT_TRUE(s.waitHalt());
    EXPECT_EQ(s.line(), 7u);
    EXPECT_EQ(r.get<std::int32_t>("Main.n"), 50000000);
    EXPECT_EQ(r.get<std::int32_t>("Main.after"), 0);
    ASSERT_TRUE(s.dbg.resume(vm::StepMode::None));
    EXPECT_EQ(s.finish(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.after"), 1);
}

} // namespace
} // namespace takt::compiler
