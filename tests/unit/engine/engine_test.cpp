// Cycle executor: task scheduling on a virtual clock, faults, restarts, online change.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "module_builder.h"
#include "takt/engine/engine.h"
#include "takt/engine/transfer.h"

namespace takt::engine {
namespace {

using bytecode::ValueKind;
using testing::ModuleBuilder;
using testing::peek;
using testing::poke;
using testing::ScriptedRunner;

constexpr std::int64_t kMs = 1'000'000;

struct Plant {
    ModuleBuilder b;
    std::uint32_t tBool = b.elementary(ValueKind::Bool, "BOOL", 1);
    std::uint32_t tInt = b.elementary(ValueKind::Int, "INT", 2);
    std::uint32_t tDint = b.elementary(ValueKind::DInt, "DINT", 4);
};

TEST(Tasks, IntervalPriorityAndBackgroundOrder) {
    Plant p;
    const std::uint32_t fast = p.b.task("Fast", 10 * kMs, 1);
    const std::uint32_t slow = p.b.task("Slow", 25 * kMs, 0);
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"x", p.tInt}});
    p.b.program("A", prog, fast);
    p.b.program("B", prog, slow);
    p.b.program("Bg", prog);
    std::vector<std::string> log;
    auto runner = std::make_unique<ScriptedRunner>();
    runner->log = &log;
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(p.b.build(), ""), f));
    std::vector<std::string> perCycle;
    for (int i = 0; i < 6; ++i) { // t = 0, 10, 20, 30, 40, 50 ms
        log.clear();
        ASSERT_TRUE(e.runCycle(f));
        std::string s;
        for (const std::string& n : log) {
            s += n + " ";
        }
        perCycle.push_back(s);
        clock.advance(10 * kMs);
    }
    // Slow (priority 0) before Fast; background after the tasks; Slow every 25 ms in phase.
    EXPECT_EQ(perCycle[0], "B A Bg ");
    EXPECT_EQ(perCycle[1], "A Bg ");
    EXPECT_EQ(perCycle[2], "A Bg ");
    EXPECT_EQ(perCycle[3], "B A Bg ");
    EXPECT_EQ(perCycle[4], "A Bg ");
    EXPECT_EQ(perCycle[5], "B A Bg ");
    EXPECT_EQ(e.cycleCount(), 6u);
    // Each task counts its runs (the harness's per-task cycles); a restart starts them afresh.
    EXPECT_EQ(e.taskRuns(fast), 6u);
    EXPECT_EQ(e.taskRuns(slow), 3u);
    EXPECT_EQ(e.taskRuns(2), 0u); // no such task
    ASSERT_TRUE(e.restart(RestartMode::Warm, f));
    EXPECT_EQ(e.taskRuns(fast), 0u);
    ASSERT_TRUE(e.runCycle(f));
    EXPECT_EQ(e.taskRuns(fast), 1u);
    EXPECT_EQ(e.taskRuns(slow), 1u);
}

// Two tasks "Fast" (10 ms) and "Slow" (25 ms) with the given priorities; A on Fast, B on Slow.
std::shared_ptr<const bytecode::Module> twoTaskModule(std::uint32_t fastPriority, std::uint32_t slowPriority) {
    Plant p;
    const std::uint32_t fast = p.b.task("Fast", 10 * kMs, fastPriority);
    const std::uint32_t slow = p.b.task("Slow", 25 * kMs, slowPriority);
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"x", p.tInt}});
    p.b.program("A", prog, fast);
    p.b.program("B", prog, slow);
    return p.b.build();
}

TEST(Tasks, OnlineChangeTakesTheNewPriorityOrderAndKeepsEachTasksPhase) {
    std::vector<std::string> log;
    auto runner = std::make_unique<ScriptedRunner>();
    runner->log = &log;
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(twoTaskModule(0, 1), "v0"), f));
    const auto cycle = [&] {
        log.clear();
        EXPECT_TRUE(e.runCycle(f));
        std::string s;
        for (const std::string& n : log) {
            s += n + " ";
        }
        clock.advance(10 * kMs);
        return s;
    };
    EXPECT_EQ(cycle(), "A B "); // t = 0: Fast has priority 0
    EXPECT_EQ(cycle(), "A ");   // t = 10
    // Same two tasks, priorities swapped: Slow now runs first, and both keep their phase
    // (Slow was released at 0, so it is due again at 25 → the cycle at t = 30).
    PreparedChange change = e.prepareChange(std::make_unique<LoadedProgram>(twoTaskModule(1, 0), "v1"), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    (void)e.applyChange(change);
    ASSERT_NE(change.program, nullptr); // now the replaced program
    EXPECT_EQ(change.program->hash(), "v0");
    EXPECT_EQ(cycle(), "A ");   // t = 20
    EXPECT_EQ(cycle(), "B A "); // t = 30
    // The same tasks by index keep their counts across the change.
    EXPECT_EQ(e.taskRuns(0), 4u);
    EXPECT_EQ(e.taskRuns(1), 2u);
}

TEST(Tasks, OnlineChangeWithMoreTasksStartsTheirScheduleAfresh) {
    std::vector<std::string> log;
    auto runner = std::make_unique<ScriptedRunner>();
    runner->log = &log;
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    Plant one;
    const std::uint32_t fast = one.b.task("Fast", 10 * kMs, 0);
    one.b.program("A", one.b.composite(ValueKind::Program, "Prog", {{"x", one.tInt}}), fast);
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(one.b.build(), "v0"), f));
    ASSERT_TRUE(e.runCycle(f));
    clock.advance(5 * kMs);
    PreparedChange change = e.prepareChange(std::make_unique<LoadedProgram>(twoTaskModule(1, 0), "v1"), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    (void)e.applyChange(change);
    log.clear();
    ASSERT_TRUE(e.runCycle(f)); // t = 5: both tasks are new, so both are released now
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0], "B");
    EXPECT_EQ(log[1], "A");
    EXPECT_TRUE(e.taskRanLastCycle(0));
    EXPECT_TRUE(e.taskRanLastCycle(1));
}

TEST(Tasks, SingleRunsOnRisingEdgeOnly) {
    Plant p;
    const std::uint32_t trigger = p.b.global("trigger", p.tBool);
    const std::uint32_t ev = p.b.task("Ev", 0, 0, trigger);
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"x", p.tInt}});
    p.b.program("E", prog, ev);
    std::vector<std::string> log;
    auto runner = std::make_unique<ScriptedRunner>();
    runner->log = &log;
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(p.b.build(), ""), f));
    const bool pattern[] = {false, true, true, false, true};
    std::vector<std::size_t> runs;
    for (bool v : pattern) {
        poke<std::uint8_t>(e.program().image(), trigger, v ? 1 : 0);
        log.clear();
        ASSERT_TRUE(e.runCycle(f));
        runs.push_back(log.size());
    }
    EXPECT_EQ(runs, (std::vector<std::size_t>{0, 1, 0, 0, 1}));
}

TEST(Cycle, FaultAbortsRestButKeepsWrites) {
    Plant p;
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"x", p.tInt}});
    const std::uint32_t pouA = p.b.program("A", prog);
    p.b.program("B", prog);
    p.b.m.files = {"main.st"};
    p.b.m.debug = {{0, 0, 3, 5}, {10, 0, 7, 9}};
    auto runner = std::make_unique<ScriptedRunner>();
    std::vector<std::string> log;
    runner->log = &log;
    runner->bodies[pouA] = [&](std::uint8_t* img, std::uint32_t inst, std::int64_t, Fault& fault) {
        poke<std::int16_t>(img, inst, 42);
        fault.message = "integer division or MOD by zero";
        fault.pou = pouA;
        fault.codeOffset = 12;
        return false;
    };
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(p.b.build(), ""), f));
    EXPECT_FALSE(e.runCycle(f));
    EXPECT_EQ(log, (std::vector<std::string>{"A"})); // B did not run
    EXPECT_EQ(peek<std::int16_t>(e.program().image(), e.program().module().programs[0].offset), 42);
    EXPECT_EQ(f.message, "integer division or MOD by zero");
    EXPECT_EQ(f.pou, "Prog");
    EXPECT_EQ(f.path, "main.st");
    EXPECT_EQ(f.line, 7u);
    EXPECT_EQ(f.column, 9u);
}

TEST(Cycle, ProcessImageCopyInAndOut) {
    Plant p;
    const std::uint32_t in = p.b.global("start", p.tBool);
    const std::uint32_t out = p.b.global("run", p.tBool);
    const std::uint32_t word = p.b.global("w", p.tInt);
    p.b.m.io.push_back({bytecode::IoArea::Input, 0, 3, 0, in, p.tBool, "%IX0.3", "start"});
    p.b.m.io.push_back({bytecode::IoArea::Output, 2, 1, 0, out, p.tBool, "%QX2.1", "run"});
    p.b.m.io.push_back({bytecode::IoArea::Output, 4, 0, 2, word, p.tInt, "%QW2", "w"});
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"x", p.tInt}});
    const std::uint32_t pou = p.b.program("Main", prog);
    auto runner = std::make_unique<ScriptedRunner>();
    runner->bodies[pou] = [&](std::uint8_t* img, std::uint32_t, std::int64_t, Fault&) {
        img[out] = img[in];
        poke<std::int16_t>(img, word, 0x1234);
        return true;
    };
    VirtualClock clock;
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(p.b.build(), ""), f));
    e.area(bytecode::IoArea::Input)[0] = 0x08;
    ASSERT_TRUE(e.runCycle(f));
    EXPECT_EQ(e.area(bytecode::IoArea::Output)[2], 0x02);
    EXPECT_EQ(e.area(bytecode::IoArea::Output)[4], 0x34);
    EXPECT_EQ(e.area(bytecode::IoArea::Output)[5], 0x12);
}

TEST(Restart, ColdReinitialisesWarmKeepsRetain) {
    Plant p;
    const std::uint32_t keep = p.b.global("keep", p.tDint, true);
    const std::uint32_t lose = p.b.global("lose", p.tDint, false);
    p.b.init<std::int32_t>(lose, 5);
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"r", p.tDint}, {"n", p.tDint}});
    p.b.program("Main", prog, bytecode::kNone, {"r"});
    VirtualClock clock;
    Engine e(std::make_unique<ScriptedRunner>(), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(p.b.build(), ""), f));
    std::uint8_t* img = e.program().image();
    const std::uint32_t inst = e.program().module().programs[0].offset;
    const auto scribble = [&] {
        poke<std::int32_t>(e.program().image(), keep, 11);
        poke<std::int32_t>(e.program().image(), lose, 22);
        poke<std::int32_t>(e.program().image(), inst, 33);
        poke<std::int32_t>(e.program().image(), inst + 8, 44);
    };
    scribble();
    ASSERT_TRUE(e.restart(RestartMode::Warm, f));
    img = e.program().image();
    EXPECT_EQ(peek<std::int32_t>(img, keep), 11);
    EXPECT_EQ(peek<std::int32_t>(img, lose), 5);
    EXPECT_EQ(peek<std::int32_t>(img, inst), 33); // RETAIN program member
    EXPECT_EQ(peek<std::int32_t>(img, inst + 8), 0);
    scribble();
    ASSERT_TRUE(e.restart(RestartMode::Cold, f));
    EXPECT_EQ(peek<std::int32_t>(img, keep), 0);
    EXPECT_EQ(peek<std::int32_t>(img, lose), 5);
    EXPECT_EQ(peek<std::int32_t>(img, inst), 0);
}

// Version 1: Main.a INT, Main.t TON-like FB, Main.gone INT, Main.c INT.
// Version 2: Main.a INT (kept), Main.t same FB (kept whole), Main.c DINT (converted), Main.n INT (new).
struct Versions {
    Plant v1, v2;
    std::shared_ptr<const bytecode::Module> m1, m2;
    Versions() {
        const std::uint32_t fb1 = v1.b.composite(ValueKind::FunctionBlock, "TON", {{"IN", v1.tBool}, {"ET", v1.tDint}});
        const std::uint32_t p1 =
            v1.b.composite(ValueKind::Program, "Prog", {{"a", v1.tInt}, {"t", fb1}, {"gone", v1.tInt}, {"c", v1.tInt}});
        v1.b.program("Main", p1);
        m1 = v1.b.build();
        const std::uint32_t fb2 = v2.b.composite(ValueKind::FunctionBlock, "TON", {{"IN", v2.tBool}, {"ET", v2.tDint}});
        const std::uint32_t p2 =
            v2.b.composite(ValueKind::Program, "Prog", {{"n", v2.tInt}, {"c", v2.tDint}, {"t", fb2}, {"a", v2.tInt}});
        v2.b.program("Main", p2);
        v2.b.init<std::int16_t>(v2.b.m.programs[0].offset, 9); // Main.n := 9
        m2 = v2.b.build();
    }
};

TEST(Transfer, PlanCountsKeptConvertedAddedDropped) {
    Versions v;
    const TransferPlan plan = computeTransferPlan(*v.m1, *v.m2);
    EXPECT_EQ(plan.report.kept, 2u);      // Main.a, Main.t (whole; its members not counted)
    EXPECT_EQ(plan.report.added, 1u);     // Main.n
    EXPECT_EQ(plan.report.dropped, 1u);   // Main.gone
    EXPECT_EQ(plan.report.converted, 1u); // Main.c, INT -> DINT
    EXPECT_EQ(plan.report.reinitialised, 0u);
    ASSERT_EQ(plan.report.entries.size(), 5u);
    EXPECT_EQ(plan.report.entries[1].path, "Main.c"); // sorted by path
    EXPECT_EQ(plan.report.entries[1].fromType, "INT");
    EXPECT_EQ(plan.report.entries[1].toType, "DINT");
}

TEST(Transfer, OnlineChangeKeepsStateAndConvertsWidenedTypes) {
    Versions v;
    VirtualClock clock;
    Engine e(std::make_unique<ScriptedRunner>(), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(v.m1, "old"), f));
    const std::uint32_t base1 = v.m1->programs[0].offset;
    const auto& t1 = v.m1->types[v.m1->pous[0].instanceType];
    poke<std::int16_t>(e.program().image(), base1 + t1.fields[0].offset, 7);        // a
    poke<std::int32_t>(e.program().image(), base1 + t1.fields[1].offset + 8, 1234); // t.ET
    poke<std::int16_t>(e.program().image(), base1 + t1.fields[3].offset, 99);       // c
    PreparedChange change = e.prepareChange(std::make_unique<LoadedProgram>(v.m2, "new"), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    const TransferReport r = e.applyChange(change);
    EXPECT_EQ(r.oldHash, "old");
    EXPECT_EQ(r.newHash, "new");
    const std::uint32_t base2 = v.m2->programs[0].offset;
    const auto& t2 = v.m2->types[v.m2->pous[0].instanceType];
    const std::uint8_t* img = e.program().image();
    EXPECT_EQ(peek<std::int16_t>(img, base2 + t2.fields[3].offset), 7);        // a kept
    EXPECT_EQ(peek<std::int32_t>(img, base2 + t2.fields[2].offset + 8), 1234); // FB state kept
    EXPECT_EQ(peek<std::int32_t>(img, base2 + t2.fields[1].offset), 99);       // c converted INT -> DINT
    EXPECT_EQ(peek<std::int16_t>(img, base2 + t2.fields[0].offset), 9);        // n initial value
}

TEST(Transfer, FailedChangeLeavesOldProgramBitIdentical) {
    Versions v;
    VirtualClock clock;
    auto runner = std::make_unique<ScriptedRunner>();
    ScriptedRunner* raw = runner.get();
    Engine e(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(e.load(std::make_unique<LoadedProgram>(v.m1, "old"), f));
    poke<std::int16_t>(e.program().image(), v.m1->programs[0].offset, 7);
    const std::vector<std::uint8_t> before(e.program().image(), e.program().image() + e.program().imageSize());
    raw->init = [](std::uint8_t*, Fault& fault) {
        fault.message = "init fault";
        return false;
    };
    auto m2 = std::make_shared<bytecode::Module>(*v.m2);
    m2->initCode = 0;
    const PreparedChange change = e.prepareChange(std::make_unique<LoadedProgram>(m2, "new"), false);
    EXPECT_FALSE(change.ok());
    EXPECT_EQ(change.fault.message, "init fault");
    EXPECT_EQ(e.program().hash(), "old");
    const std::vector<std::uint8_t> after(e.program().image(), e.program().image() + e.program().imageSize());
    EXPECT_EQ(before, after);
}

TEST(Transfer, WarmPlanCarriesOnlyRetain) {
    Plant p;
    const std::uint32_t prog = p.b.composite(ValueKind::Program, "Prog", {{"r", p.tInt}, {"n", p.tInt}});
    p.b.program("Main", prog, bytecode::kNone, {"r"});
    auto m = p.b.build();
    const TransferPlan plan = computeTransferPlan(*m, *m, true);
    EXPECT_EQ(plan.report.kept, 1u);
    EXPECT_EQ(plan.report.reinitialised, 1u);
    ASSERT_EQ(plan.copies.size(), 1u);
    EXPECT_EQ(plan.copies[0].from, m->programs[0].offset);
}

} // namespace
} // namespace takt::engine
