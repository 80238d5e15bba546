// A running scan loop never allocates: this binary counts every operator new while cycles run
// (start and stop, which allocate threads and buffers, are outside the counted window).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "module_builder.h"
#include "scan_test_support.h"
#include "takt/engine/trace_recorder.h"
#include "takt/engine/transfer.h"
#include "takt/engine/value_watch.h"

#include "../counting_new.h"

using takt::test::gAllocations;
using takt::test::gCounting;
using takt::test::gFrees;

namespace takt::engine {
namespace {

using bytecode::ValueKind;
using testing::AbortableRunner;
using testing::ByteLoopRig;
using testing::ByteProgram;
using testing::FakeIo;
using testing::submitAndWait;
using testing::waitFor;

TEST(ScanNoAllocation, CyclesWithIoStatisticsSnapshotsAndTasksDoNotAllocate) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    o.watchdog.enabled = true;
    o.watchdog.timeoutMs = 500;
    ByteLoopRig rig(3, o, 2'000'000); // the program on a 2 ms task
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    std::string error;
    ASSERT_TRUE(loop.start(error));
    // Let the first cycles (first-touch of every buffer) pass, then count.
    while (loop.snapshot().cycles < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gAllocations = 0;
    gCounting = true;
    const std::uint64_t from = loop.snapshot().cycles;
    while (loop.snapshot().cycles < from + 100) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gCounting = false;
    loop.stop();
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_GE(loop.execTime().count(), 105u);
}

TEST(ScanNoAllocation, ApplyingReadWriteForcePauseResumeCommandsDoesNotAllocate) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    ByteLoopRig rig(1, o);
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    const std::uint32_t in = rig.prog.in;
    const std::uint32_t out = rig.prog.out;

    // Everything the commands point to is built before the counted window.
    std::array<ImageRange, 4> ranges{};
    ranges[0] = ImageRange{ImageArea::Data, false, 0, out, 1};
    ranges[1] = ImageRange{ImageArea::Input, false, 0, 0, 4};
    ranges[2] = ImageRange{ImageArea::Output, true, 3, 2, 1};
    ranges[3] = ImageRange{ImageArea::Data, false, 0, in, 1};
    std::array<std::uint8_t, 7> writeBytes{9, 1, 2, 3, 4, 1, 5};
    std::array<std::uint8_t, 7> readBytes{};
    ForceTable a;
    a.entries.push_back(ForceEntry{ImageRange{ImageArea::Input, false, 0, 1, 1}, 0});
    a.entries.push_back(ForceEntry{ImageRange{ImageArea::Output, true, 5, 3, 1}, 1});
    a.entries.push_back(ForceEntry{ImageRange{ImageArea::Data, false, 0, out, 1}, 2});
    a.values = {0x11, 1, 0x22};
    ForceTable b = a;
    b.values = {0x33, 0, 0x44};
    std::array<CommandResult, 6> results{};
    std::array<ScanCommand, 6> cmds{};
    cmds[0].kind = ScanCommandKind::Write;
    cmds[0].ranges = ranges.data();
    cmds[0].rangeCount = 4;
    cmds[0].writeBytes = writeBytes.data();
    cmds[1].kind = ScanCommandKind::Read;
    cmds[1].ranges = ranges.data();
    cmds[1].rangeCount = 4;
    cmds[1].readBytes = readBytes.data();
    cmds[2].kind = ScanCommandKind::SetForces;
    cmds[2].forces = &a;
    cmds[3].kind = ScanCommandKind::Pause;
    cmds[4].kind = ScanCommandKind::Resume;
    cmds[5].kind = ScanCommandKind::SetForces;
    cmds[5].forces = &b;
    for (std::size_t i = 0; i < cmds.size(); ++i) {
        cmds[i].result = &results[i];
    }

    std::string error;
    ASSERT_TRUE(loop.start(error));
    while (loop.snapshot().cycles < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gAllocations = 0;
    gCounting = true;
    // This thread is the control side: it only pushes prebuilt commands and polls counters.
    const std::uint64_t from = loop.snapshot().cycles;
    int rounds = 0;
    bool allOk = true;
    while (loop.snapshot().cycles < from + 100 || rounds < 20) {
        for (const ScanCommand& c : cmds) {
            while (!loop.submit(c)) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
        const std::uint64_t ticket = loop.commandsSubmitted();
        while (loop.commandsDone() < ticket) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        for (const CommandResult& r : results) {
            allOk = allOk && r.ok;
        }
        ++rounds;
    }
    gCounting = false;
    loop.stop();
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_TRUE(allOk);
    EXPECT_GE(loop.commandsDone(), 20u * cmds.size());
    EXPECT_EQ(loop.snapshot().state, ScanState::Stopped);
}

// Submits `c` and spins until the scan thread applied it, without allocating on this thread.
void applyAtBoundary(ScanLoop& loop, const ScanCommand& c) {
    while (!loop.submit(c)) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const std::uint64_t ticket = loop.commandsSubmitted();
    while (loop.commandsDone() < ticket) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

TEST(ScanNoAllocation, OnlineChangeThatAddsTasksAndGrowsAnAreaThenAWarmRestartNeitherAllocateNorFree) {
    ByteProgram prog(1'000'000);
    auto runner = std::make_unique<AbortableRunner>();
    runner->body = [](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        ++image[0];
        return true;
    };
    CycleClock clock;
    Engine engine(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(prog.b.build(), "v0"), f));
    FakeIo io;
    ScanOptions o;
    o.periodNs = 1'000'000;
    ScanLoop loop(engine, clock, io, o);

    // The next program has two more tasks, in another priority order, and an input at %IB40:
    // beyond the driver's 8 bytes, so the input area must grow at the swap.
    ByteProgram next(1'000'000);
    next.b.task("Slow", 4'000'000, 5);
    next.b.task("Urgent", 1'000'000, 0);
    const std::uint32_t far = next.b.global("far", next.tByte);
    next.b.m.io.push_back(bytecode::IoBinding{bytecode::IoArea::Input, 40, 0, 1, far, next.tByte, "%IB40", "far"});

    CommandResult reloadResult;
    CommandResult restartResult;
    ScanCommand reload;
    reload.kind = ScanCommandKind::Reload;
    reload.result = &reloadResult;
    ScanCommand restart;
    restart.kind = ScanCommandKind::Restart;
    restart.mode = RestartMode::Warm;
    restart.result = &restartResult;

    std::string error;
    ASSERT_TRUE(loop.start(error));
    while (loop.snapshot().cycles < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Prepared on this (control) thread while cycles run: this part may allocate.
    PreparedChange change = engine.prepareChange(std::make_unique<LoadedProgram>(next.b.build(), "v1"), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    reload.change = &change;
    gAllocations = 0;
    gFrees = 0;
    gCounting = true;
    applyAtBoundary(loop, reload);
    applyAtBoundary(loop, restart);
    const std::uint64_t from = loop.snapshot().cycles;
    while (loop.snapshot().cycles < from + 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gCounting = false;
    loop.stop();
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_EQ(gFrees.load(), 0u);
    EXPECT_TRUE(reloadResult.ok);
    EXPECT_TRUE(restartResult.ok);
    EXPECT_EQ(engine.program().hash(), "v1");
    EXPECT_EQ(engine.program().module().tasks.size(), 3u);
    EXPECT_EQ(engine.area(bytecode::IoArea::Input).size(), 41u);
    // What the swap replaced came back to be freed here: the old program, its schedule and the
    // outgrown 8-byte input area.
    ASSERT_NE(change.program, nullptr);
    EXPECT_EQ(change.program->hash(), "v0");
    EXPECT_EQ(change.tasks.order.size(), 1u);
    EXPECT_EQ(change.areas[static_cast<std::size_t>(bytecode::IoArea::Input)].size(), 8u);
}

// Applying a plan with conversions (ENUM by name, integer widening, REAL -> LREAL, a longer
// STRING) next to a 64 KiB memcpy run allocates and frees nothing; the time it takes is printed.
TEST(ScanNoAllocation, ApplyingAConvertingTransferPlanAllocatesNothing) {
    const auto version = [](testing::ModuleBuilder& b, bool changed) {
        const std::uint32_t tInt = b.elementary(ValueKind::Int, "INT", 2);
        const std::uint32_t tDint = b.elementary(ValueKind::DInt, "DINT", 4);
        bytecode::TypeDesc e;
        e.kind = ValueKind::Enum;
        e.name = "State";
        e.size = 2;
        e.element = tInt;
        e.enumValues = changed ? std::vector<bytecode::EnumValueDesc>{{"Idle", 0}, {"Hold", 1}, {"Heat", 2}}
                               : std::vector<bytecode::EnumValueDesc>{{"Idle", 0}, {"Heat", 1}};
        e.signature = changed ? "ENUM State(INT){Idle=0;Hold=1;Heat=2;}" : "ENUM State(INT){Idle=0;Heat=1;}";
        const std::uint32_t tEnum = b.add(e);
        bytecode::TypeDesc str;
        str.kind = ValueKind::String;
        str.stringLength = changed ? 40 : 20;
        str.name = changed ? "STRING[40]" : "STRING[20]";
        str.size = str.stringLength + 1;
        const std::uint32_t tStr = b.add(str);
        b.global("state", tEnum);
        b.global("count", changed ? tDint : tInt);
        b.global("r", changed ? b.elementary(ValueKind::LReal, "LREAL", 8) : b.elementary(ValueKind::Real, "REAL", 4));
        b.global("name", tStr);
        const std::uint32_t tStates = b.array(tEnum, {0, 99});
        b.m.types[tStates].signature = "ARRAY[0..99] OF " + e.signature; // as the compiler signs it
        b.global("states", tStates);
        b.global("data", b.array(tDint, {0, 16383})); // 64 KiB kept as it is
    };
    testing::ModuleBuilder v1;
    testing::ModuleBuilder v2;
    version(v1, false);
    version(v2, true);
    TransferPlan plan = computeTransferPlan(v1.m, v2.m);
    ASSERT_EQ(plan.converts.size(), 104u); // state, count, r, name and 100 states[i]
    std::vector<std::uint8_t> oldImage(v1.m.initImage.size(), 1);
    std::vector<std::uint8_t> newImage(v2.m.initImage.size(), 0);
    constexpr int kRounds = 200;
    std::vector<std::int64_t> ns(kRounds);
    gAllocations = 0;
    gFrees = 0;
    gCounting = true;
    for (int i = 0; i < kRounds; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        applyTransferPlan(plan, oldImage.data(), newImage.data());
        ns[static_cast<std::size_t>(i)] =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
    gCounting = false;
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_EQ(gFrees.load(), 0u);
    std::sort(ns.begin(), ns.end());
    std::printf("[ figures ] applying a plan over %zu bytes with %zu conversions: p50 %.1f us, p99 %.1f us\n",
                newImage.size(), plan.converts.size(), static_cast<double>(ns[kRounds / 2]) / 1000.0,
                static_cast<double>(ns[kRounds * 99 / 100]) / 1000.0);
}

// A runner that can run tasks on threads of their own (CodeRunner::forTask) and does nothing.
class TaskApartRunner final : public CodeRunner {
public:
    bool runInit(LoadedProgram& /*p*/, Fault& /*f*/) override { return true; }
    std::unique_ptr<CodeRunner> forTask(std::uint32_t /*slot*/) const override {
        return std::make_unique<TaskApartRunner>();
    }
    bool runProgram(LoadedProgram& /*p*/, const bytecode::ProgramInstance& /*inst*/, std::int64_t /*now*/,
                    Fault& /*f*/) override {
        return true;
    }
};

TEST(ScanNoAllocation, TaskThreadsAndAnOnlineChangeAcrossThemDoNotAllocate) {
    testing::ModuleBuilder b;
    const std::uint32_t tBool = b.elementary(ValueKind::Bool, "BOOL", 1);
    const std::uint32_t trigger = b.global("trigger", tBool);
    const std::uint32_t prog = b.composite(ValueKind::Program, "Prog", {{"x", tBool}});
    b.program("F", prog, b.task("Fast", 1'000'000, 0));
    b.program("S", prog, b.task("Slow", 7'000'000, 2));
    b.program("E", prog, b.task("Event", 0, 1, trigger));
    CycleClock clock;
    Engine engine(std::make_unique<TaskApartRunner>(), clock);
    FaultReport fault;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(b.build(), ""), fault));
    FakeIo io;
    ScanOptions o;
    o.periodNs = 1'000'000;
    o.watchdog.enabled = true;
    o.watchdog.timeoutMs = 500;
    ScanLoop loop(engine, clock, io, o);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    while (loop.snapshot().cycles < 5 || loop.taskThread(1)->cycles.load() < 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    PreparedChange change = engine.prepareChange(std::make_unique<LoadedProgram>(b.build(), ""), false);
    ASSERT_TRUE(change.ok());
    ScanCommand reload;
    reload.kind = ScanCommandKind::Reload;
    reload.change = &change;
    CommandResult r;
    reload.result = &r;
    const std::uint64_t fast = loop.taskThread(0)->cycles.load();
    gAllocations = 0;
    gFrees = 0;
    gCounting = true;
    ASSERT_TRUE(loop.submit(reload));
    const std::uint64_t ticket = loop.commandsSubmitted();
    while (loop.commandsDone() < ticket || loop.taskThread(0)->cycles.load() < fast + 50) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gCounting = false;
    loop.stop();
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_EQ(gFrees.load(), 0u);
}

TEST(ValueWatchOnTheScanLoop, PublishingAThousandVariablesDoesNotAllocate) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    ByteLoopRig rig(1, o);
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    std::vector<ImageRange> ranges(1000, ImageRange{ImageArea::Data, false, 0, rig.prog.out, 1});
    ValueWatch watch(&rig.engine->program().module(), ranges);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ScanCommand set;
    set.kind = ScanCommandKind::SetWatch;
    set.watch = &watch;
    CommandResult r;
    ASSERT_TRUE(submitAndWait(loop, set, r));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= r.cycle + 5; }));
    gAllocations = 0;
    gCounting = true;
    const std::uint64_t from = loop.snapshot().cycles;
    while (loop.snapshot().cycles < from + 50) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gCounting = false;
    loop.stop();
    EXPECT_EQ(gAllocations.load(), 0u);
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    ASSERT_TRUE(watch.read(out, cycle));
    EXPECT_GE(cycle, from + 50);
}

// A trace of 32 variables sampled every cycle (trace_recorder.h): the ring is allocated when the
// trace is made, so the cycles that fill it allocate nothing.
TEST(TraceOnTheScanLoop, SamplingThirtyTwoVariablesEveryCycleDoesNotAllocate) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    ByteLoopRig rig(1, o);
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    const bytecode::Module& m = rig.engine->program().module();
    TraceLayout layout;
    layout.module = &m;
    layout.count = kMaxTraceChannels;
    for (std::size_t i = 0; i < kMaxTraceChannels; ++i) {
        layout.ranges[i] = ImageRange{ImageArea::Data, false, 0, rig.prog.out, 1};
    }
    TraceRecorder recorder(layout, TraceTrigger{}, 0, 100'000);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    loop.traceSlot(0).attach(&recorder, m.tasks.empty() ? TraceSlot::kBaseCycle : 0);
    ASSERT_TRUE(waitFor([&] { return recorder.taken() >= 5; }));
    gAllocations = 0;
    gCounting = true;
    const std::uint64_t from = recorder.taken();
    // Polled without waitFor: this thread's allocations count too. Hang guard 10 s.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (recorder.taken() < from + 50 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gCounting = false;
    ASSERT_GE(recorder.taken(), from + 50);
    loop.traceSlot(0).detach();
    loop.stop();
    EXPECT_EQ(gAllocations.load(), 0u);
    ASSERT_GE(recorder.kept(), from + 50);
    EXPECT_EQ(recorder.at(1).cycle, recorder.at(0).cycle + 1); // one sample per cycle
}

} // namespace
} // namespace takt::engine
