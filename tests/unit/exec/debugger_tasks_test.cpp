// A breakpoint halts one task on its own scan thread (takt/vm/debug.h, ScanLoop::taskDebugger):
// compiled ST on the VM runner, real task threads and real time. The halted task's watchdog does
// not count while it is halted; the other task keeps its releases; continue and step run it on.
#include <gtest/gtest.h>

#include <strings.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <string>
#include <thread>

#include "support/compile_text.h"
#include "takt/engine/engine.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"
#include "takt/vm/debug.h"
#include "unit/engine/scan_test_support.h"

namespace takt::engine {
namespace {

using testing::FakeIo;
using testing::waitFor;

constexpr std::int64_t kMs = 1'000'000;

// Line numbers below are those of this text (line 1 is the empty line after R"().
const char* const kSource = R"(
FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR total : DINT; calls : DINT; END_VAR
  calls := calls + 1;
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM SlowProg
  VAR acc : Accum; i : DINT; cycles : DINT; END_VAR
  FOR i := 1 TO 3 DO
    acc(x := i);
  END_FOR;
  cycles := cycles + 1;
END_PROGRAM

PROGRAM FastProg
  VAR cycles : DINT; END_VAR
  cycles := cycles + 1;
END_PROGRAM

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#10ms, PRIORITY := 2);
    PROGRAM pFast WITH Fast : FastProg;
    PROGRAM pSlow WITH Slow : SlowProg;
  END_RESOURCE
END_CONFIGURATION
)";
constexpr std::uint32_t kLineCalls = 5;
constexpr std::uint32_t kLineTotal = 6;
constexpr std::uint32_t kLineCall = 12;

std::int64_t deadlineIn(std::int64_t seconds) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (static_cast<std::int64_t>(ts.tv_sec) + seconds) * 1'000'000'000 + ts.tv_nsec;
}

struct Rig {
    Rig() {
        compiled = takt::test::compileText(kSource);
        if (!compiled.program.ok()) {
            ADD_FAILURE() << compiled.rendered() << compiled.program.failure;
            return;
        }
        options.periodNs = 2 * kMs;
        options.watchdog.enabled = true;
        options.watchdog.timeoutMs = 50;
        options.watchdog.action = FaultAction::SafeHalt;
        engine = std::make_unique<Engine>(std::make_unique<VmRunner>(), clock);
        FaultReport f;
        ok = engine->load(std::make_unique<LoadedProgram>(compiled.program.module, compiled.program.hash), f);
        EXPECT_TRUE(ok) << f.message;
    }
    [[nodiscard]] const bytecode::Module& module() const { return *compiled.program.module; }
    std::size_t task(std::string_view name) const {
        for (std::size_t t = 0; t < module().tasks.size(); ++t) {
            if (strcasecmp(module().tasks[t].name.c_str(), std::string(name).c_str()) == 0) {
                return t;
            }
        }
        ADD_FAILURE() << "no task " << name;
        return 0;
    }
    std::int32_t get(std::string_view path) {
        for (const bytecode::VarEntry& v : module().variables) {
            if (strcasecmp(v.path.c_str(), std::string(path).c_str()) == 0) {
                std::atomic_ref<std::int32_t> cell(
                    *reinterpret_cast<std::int32_t*>(engine->program().image() + v.offset));
                return cell.load();
            }
        }
        ADD_FAILURE() << "no variable " << path;
        return 0;
    }
    void setLine(std::uint32_t line, bool on) {
        const vm::ResolvedLine rl = vm::resolveLine(module(), 0, line);
        ASSERT_TRUE(rl.verified) << rl.reason;
        for (std::uint32_t pc : rl.pcs) {
            ASSERT_TRUE(engine->program().stops().setBreakpoint(pc, on));
        }
    }

    takt::test::CompiledText compiled;
    ScanOptions options;
    CycleClock clock;
    std::unique_ptr<Engine> engine;
    FakeIo io;
    bool ok = false;
};

TEST(DebuggerTasks, ABreakpointHaltsOneTaskWhileTheOtherKeepsItsReleases) {
    Rig rig;
    ASSERT_TRUE(rig.ok);
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    vm::Debugger* dbg = loop.taskDebugger(rig.task("SLOW"));
    ASSERT_NE(dbg, nullptr);
    dbg->attach();
    const std::uint32_t seen = dbg->haltCount();
    rig.setLine(kLineTotal, true);
    ASSERT_TRUE(dbg->waitHalted(seen, deadlineIn(10)));
    ASSERT_TRUE(dbg->halted());
    ASSERT_EQ(dbg->frames().size(), 2u);
    EXPECT_EQ(vm::sourceAt(rig.module(), dbg->frames()[1].pc).line, kLineTotal);
    EXPECT_EQ(vm::sourceAt(rig.module(), dbg->frames()[0].pc).line, kLineCall);
    // Halted for ten times the watchdog's timeout: the fast task runs on, nothing trips.
    const std::int32_t fastBefore = rig.get("pFast.cycles");
    const std::int32_t slowBefore = rig.get("pSlow.cycles");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_GE(rig.get("pFast.cycles") - fastBefore, 50); // 250 releases in 500 ms; a loaded machine runs fewer
    EXPECT_EQ(rig.get("pSlow.cycles"), slowBefore);
    EXPECT_TRUE(dbg->halted());
    EXPECT_EQ(loop.snapshot().watchdogTrips, 0u);
    EXPECT_EQ(loop.snapshot().state, ScanState::Running);
    EXPECT_EQ(rig.io.safeCalls.load(), 0);
    const TaskThread* slow = loop.taskThread(rig.task("SLOW"));
    ASSERT_NE(slow, nullptr);
    // Step out of the FB: halted again in the program, one frame; then continue with no breakpoint.
    const std::uint32_t before = dbg->haltCount();
    ASSERT_TRUE(dbg->resume(vm::StepMode::Out));
    ASSERT_TRUE(dbg->waitHalted(before, deadlineIn(10)));
    EXPECT_EQ(dbg->frames().size(), 1u);
    rig.setLine(kLineTotal, false);
    ASSERT_TRUE(dbg->resume(vm::StepMode::None));
    ASSERT_TRUE(waitFor([&] { return rig.get("pSlow.cycles") >= slowBefore + 3; }));
    EXPECT_FALSE(dbg->halted());
    // The slow task's own figures leave the halt out: no overrun, no execution time of 500 ms.
    EXPECT_EQ(slow->overruns.load(), 0u);
    EXPECT_LT(slow->lastExecNs.load(), 100 * kMs);
    EXPECT_EQ(loop.snapshot().watchdogTrips, 0u);
    loop.stop();
}

// An online change brings a new program with a stop map of its own: the task's debugger follows
// it, so a breakpoint set in the new program halts the task (and the old map, freed with the old
// program, is never read again).
TEST(DebuggerTasks, AfterAnOnlineChangeTheNewProgramsBreakpointsHalt) {
    Rig rig;
    ASSERT_TRUE(rig.ok);
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    vm::Debugger* dbg = loop.taskDebugger(rig.task("SLOW"));
    ASSERT_NE(dbg, nullptr);
    dbg->attach();
    for (int i = 0; i < 2; ++i) {
        PreparedChange change = rig.engine->prepareChange(
            std::make_unique<LoadedProgram>(rig.compiled.program.module, rig.compiled.program.hash), false);
        ASSERT_TRUE(change.ok()) << change.fault.message;
        ScanCommand c;
        c.kind = ScanCommandKind::Reload;
        c.change = &change;
        CommandResult r;
        ASSERT_TRUE(testing::submitAndWait(loop, c, r));
        ASSERT_TRUE(r.ok) << (r.refusal != nullptr ? r.refusal : "");
    }
    const std::uint32_t seen = dbg->haltCount();
    rig.setLine(kLineCall, true);
    ASSERT_TRUE(dbg->waitHalted(seen, deadlineIn(10)));
    EXPECT_EQ(vm::sourceAt(rig.module(), dbg->frames().back().pc).line, kLineCall);
    EXPECT_EQ(&dbg->stops(), &rig.engine->program().stops());
    loop.stop();
    EXPECT_FALSE(dbg->halted());
}

// A PLC never stays halted because its debugger is gone: stop() releases a halted task.
TEST(DebuggerTasks, StopWhileATaskIsHaltedDetachesAndStops) {
    Rig rig;
    ASSERT_TRUE(rig.ok);
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    vm::Debugger* dbg = loop.taskDebugger(rig.task("SLOW"));
    ASSERT_NE(dbg, nullptr);
    dbg->attach();
    const std::uint32_t seen = dbg->haltCount();
    rig.setLine(kLineCalls, true);
    ASSERT_TRUE(dbg->waitHalted(seen, deadlineIn(10)));
    loop.stop(); // returns: the halted task was released and ran to its boundary
    EXPECT_FALSE(dbg->halted());
    EXPECT_FALSE(dbg->attached());
}

} // namespace
} // namespace takt::engine
