// How long each task stands still for an online change when the tasks run on scan threads of
// their own: a compiled ST program with three tasks and 64 KiB of state, on the interpreter,
// changed 500 times while it runs. Each change parks every task at its boundary (the lower
// priorities first), swaps at the base cycle and wakes them; every task's park is measured per
// change (TaskThread::lastPauseNs), and so is what that adds to the task's next release: the start
// lateness of its first cycle after a change (TaskThread::lateAfterParkNs) beside its lateness
// before any change. The figures are in docs/performance.md.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/compile_text.h"
#include "support/wait.h"
#include "takt/engine/histogram.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/values.h"
#include "takt/engine/vm_runner.h"

namespace takt::engine {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr int kReloads = 500;
constexpr std::size_t kTasks = 3;

// Three tasks around 64 KiB of state (16384 DINTs): the fast one writes an element a cycle, the
// middle one reads 256 of them, the slow one 4096. `version` is the one thing two versions change,
// so every online change keeps the whole array and re-initialises nothing.
std::string source(int version) {
    return fmt::format(R"(
PROGRAM Writer
VAR_EXTERNAL state : ARRAY[0..16383] OF DINT; END_VAR
VAR n : DINT; END_VAR
n := n + 1;
state[n MOD 16384] := n;
END_PROGRAM

PROGRAM Summer
VAR_INPUT span : DINT; END_VAR
VAR_EXTERNAL state : ARRAY[0..16383] OF DINT; seen : DINT; END_VAR
VAR i : DINT; sum : DINT; END_VAR
sum := 0;
FOR i := 0 TO span - 1 DO
    sum := sum + state[i];
END_FOR;
seen := {};
END_PROGRAM

CONFIGURATION Plant
    VAR_GLOBAL
        state : ARRAY[0..16383] OF DINT;
        seen : DINT;
    END_VAR
    RESOURCE Cpu ON PLC
        TASK Fast (INTERVAL := T#2ms, PRIORITY := 0);
        TASK Mid (INTERVAL := T#10ms, PRIORITY := 1);
        TASK Slow (INTERVAL := T#50ms, PRIORITY := 2);
        PROGRAM pFast WITH Fast : Writer;
        PROGRAM pMid WITH Mid : Summer (span := 256);
        PROGRAM pSlow WITH Slow : Summer (span := 4096);
    END_RESOURCE
END_CONFIGURATION
)",
                       version);
}

// No field I/O: the program has no located variables.
class NoIo final : public ProcessIo {
public:
    std::size_t inputBytes() const noexcept override { return 0; }
    std::size_t outputBytes() const noexcept override { return 0; }
    std::size_t memoryBytes() const noexcept override { return 0; }
    void readInputs(const ProcessImageView& /*image*/) noexcept override {}
    void writeOutputs(const ProcessImageView& /*image*/) noexcept override {}
    void applySafeState() noexcept override {}
    void releaseSafeState() noexcept override {}
    IoHealthSummary healthSummary() const noexcept override { return {}; }
};

double percentileUs(std::vector<std::int64_t> ns, double p) {
    std::sort(ns.begin(), ns.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ns.size())));
    return static_cast<double>(ns[std::clamp<std::size_t>(rank, 1, ns.size()) - 1]) / 1e3;
}

bool waitFor(const std::function<bool()>& done) {
    return test::waitUntil(done, std::chrono::seconds(10), std::chrono::microseconds(200));
}

TEST(TaskReloadPause, EveryTaskParksOncePerChangeAroundTheSwapWith64KiBOfState) {
    const test::CompiledText v1 = test::compileText(source(1));
    const test::CompiledText v2 = test::compileText(source(2));
    ASSERT_TRUE(v1.program.ok()) << v1.rendered();
    ASSERT_TRUE(v2.program.ok()) << v2.rendered();
    ASSERT_NE(v1.program.hash, v2.program.hash);

    CycleClock clock;
    Engine engine(std::make_unique<VmRunner>(0), clock);
    FaultReport fault;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(v1.program.module, v1.program.hash), fault))
        << fault.message;
    ASSERT_GE(engine.program().imageSize(), 65536u);
    NoIo io;
    ScanOptions options;
    options.periodNs = 10 * kMs;
    options.realtime.fifo = true; // as a plant would run it; refused without CAP_SYS_NICE (then SCHED_OTHER)
    options.realtime.priority = 40;
    ScanLoop loop(engine, clock, io, options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    const bool fifo = std::none_of(loop.warnings().begin(), loop.warnings().end(),
                                   [](const std::string& w) { return w.find("SCHED_FIFO") != std::string::npos; });
    ASSERT_TRUE(loop.taskThreads());
    ASSERT_TRUE(waitFor([&] { return loop.taskThread(2)->cycles.load() >= 2; }));

    // Start lateness without changes first, over about as long as the changes will take (each
    // waits for the fast task's next release): what the changes add to a task's releases is what
    // the figures compare, since the park time itself includes waiting between releases, which
    // delays nothing. 3 s gives the 50 ms task 60 releases.
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    std::array<std::array<std::int64_t, 3>, kTasks> lateBefore{};
    for (std::size_t t = 0; t < kTasks; ++t) {
        const LatencyHistogram* h = loop.taskLateness(t);
        ASSERT_NE(h, nullptr);
        lateBefore[t] = {h->percentile(0.5), h->percentile(0.99), h->percentile(1.0)};
    }

    std::array<std::vector<std::int64_t>, kTasks> parks;
    std::vector<std::int64_t> swaps;
    std::vector<std::int64_t> wakeups; // the fast task's park less the swap: waking the base cycle and itself
    std::array<std::uint64_t, kTasks> before{};
    // The start lateness of each task's first cycle after a change, sampled whenever the task has
    // resumed since the last look (the slower tasks often stand parked through several changes).
    std::array<std::vector<std::int64_t>, kTasks> lateAfter;
    std::array<std::uint64_t, kTasks> resumesSeen{};
    for (std::size_t t = 0; t < kTasks; ++t) {
        resumesSeen[t] = loop.taskThread(t)->resumes.load(std::memory_order_acquire);
    }
    for (int i = 0; i < kReloads; ++i) {
        const test::CompiledText& next = i % 2 == 0 ? v2 : v1;
        for (std::size_t t = 0; t < kTasks; ++t) {
            before[t] = loop.taskThread(t)->parks.load(std::memory_order_acquire);
        }
        PreparedChange change =
            engine.prepareChange(std::make_unique<LoadedProgram>(next.program.module, next.program.hash), false);
        ASSERT_TRUE(change.ok()) << change.fault.message;
        ScanCommand c;
        c.kind = ScanCommandKind::Reload;
        c.change = &change;
        CommandResult r;
        c.result = &r;
        ASSERT_TRUE(loop.submit(c));
        const std::uint64_t ticket = loop.commandsSubmitted();
        ASSERT_TRUE(waitFor([&] { return loop.commandsDone() >= ticket; })) << "reload " << i;
        ASSERT_TRUE(r.ok) << "reload " << i << ": " << (r.refusal != nullptr ? r.refusal : "");
        EXPECT_EQ(r.change.reinitialised + r.change.dropped + r.change.added, 0u) << "reload " << i;
        swaps.push_back(r.change.pauseNs);
        for (std::size_t t = 0; t < kTasks; ++t) {
            const TaskThread& w = *loop.taskThread(t);
            // The task wakes from its park after the swap: wait for it to count the park.
            ASSERT_TRUE(waitFor([&] { return w.parks.load(std::memory_order_acquire) > before[t]; }))
                << "reload " << i << ": task " << w.name << " never parked";
            EXPECT_EQ(w.parks.load(std::memory_order_acquire), before[t] + 1)
                << "reload " << i << ": task " << w.name << " parked more than once";
            const std::int64_t pause = w.lastPauseNs.load(std::memory_order_relaxed);
            // Every task stood parked while the base cycle swapped, so its park spans the swap.
            EXPECT_GE(pause, r.change.pauseNs) << "reload " << i << ": task " << w.name;
            parks[t].push_back(pause);
            if (t == 0) {
                wakeups.push_back(pause - r.change.pauseNs);
            }
        }
        // One change at a time as far as the fast task goes: it runs its next release before the
        // next change parks it, so every change gives it a sample.
        const TaskThread& fast = *loop.taskThread(0);
        ASSERT_TRUE(waitFor([&] { return fast.resumes.load(std::memory_order_acquire) > resumesSeen[0]; }))
            << "reload " << i << ": the fast task never ran after it";
        for (std::size_t t = 0; t < kTasks; ++t) {
            const TaskThread& w = *loop.taskThread(t);
            const std::uint64_t resumes = w.resumes.load(std::memory_order_acquire);
            if (resumes != resumesSeen[t]) {
                resumesSeen[t] = resumes;
                lateAfter[t].push_back(w.lateAfterParkNs.load(std::memory_order_relaxed));
            }
        }
    }
    const std::int64_t fastCycles = static_cast<std::int64_t>(loop.taskThread(0)->cycles.load());
    ASSERT_TRUE(waitFor([&] { return static_cast<std::int64_t>(loop.taskThread(0)->cycles.load()) > fastCycles + 3; }))
        << "the fast task runs on after the last change";
    loop.stop();
    EXPECT_EQ(loop.snapshot().reloads, static_cast<std::uint64_t>(kReloads));
    EXPECT_EQ(loop.snapshot().faults, 0u);

    // The 64 KiB came through every change: the fast task's writes of every cycle are there.
    VarRef n;
    VarRef state;
    std::string why;
    ASSERT_TRUE(resolvePath(engine.program().module(), "pFast.n", n, why)) << why;
    ASSERT_TRUE(resolvePath(engine.program().module(), "state", state, why)) << why;
    std::int32_t written = 0;
    std::memcpy(&written, engine.program().image() + n.offset, sizeof written);
    ASSERT_GT(written, kReloads / 10);
    for (std::int32_t k = std::max(1, written - 16383); k <= written; ++k) {
        std::int32_t v = 0;
        std::memcpy(&v, engine.program().image() + state.offset + 4 * static_cast<std::uint32_t>(k % 16384), sizeof v);
        ASSERT_EQ(v, k) << "state[" << k % 16384 << "] after " << kReloads << " changes";
    }

    std::string figures = fmt::format("{} changes, {}, 64 KiB: swap p50 {:.1f} us, p99 {:.1f} us, max {:.1f} us",
                                      kReloads, fifo ? "SCHED_FIFO" : "SCHED_OTHER", percentileUs(swaps, 0.5),
                                      percentileUs(swaps, 0.99), percentileUs(swaps, 1.0));
    for (std::size_t t = 0; t < kTasks; ++t) {
        figures += fmt::format("; {} parked p50 {:.1f} us, p99 {:.1f} us, max {:.1f} us", loop.taskThread(t)->name,
                               percentileUs(parks[t], 0.5), percentileUs(parks[t], 0.99), percentileUs(parks[t], 1.0));
        ::testing::Test::RecordProperty(loop.taskThread(t)->name + "_park_p99_us",
                                        fmt::format("{:.1f}", percentileUs(parks[t], 0.99)));
    }
    figures += fmt::format("; {} park less the swap p50 {:.1f} us, p99 {:.1f} us", loop.taskThread(0)->name,
                           percentileUs(wakeups, 0.5), percentileUs(wakeups, 0.99));
    // What a change adds to a task's releases: the first cycle after a change against the task's
    // cycles before any change, side by side in one run.
    for (std::size_t t = 0; t < kTasks; ++t) {
        ASSERT_FALSE(lateAfter[t].empty()) << loop.taskThread(t)->name << " never ran after a change";
        const double afterP99 = percentileUs(lateAfter[t], 0.99);
        figures += fmt::format("; {} start lateness without changes p50/p99/max {:.1f}/{:.1f}/{:.1f} us, first "
                               "release after a change ({} samples) {:.1f}/{:.1f}/{:.1f} us, p99 ratio {:.2f}",
                               loop.taskThread(t)->name, lateBefore[t][0] / 1e3, lateBefore[t][1] / 1e3,
                               lateBefore[t][2] / 1e3, lateAfter[t].size(), percentileUs(lateAfter[t], 0.5), afterP99,
                               percentileUs(lateAfter[t], 1.0),
                               afterP99 / std::max(1.0, static_cast<double>(lateBefore[t][1]) / 1e3));
        ::testing::Test::RecordProperty(loop.taskThread(t)->name + "_late_after_change_p99_us",
                                        fmt::format("{:.1f}", afterP99));
    }
    std::printf("[ figures ] %s\n", figures.c_str());
}

} // namespace
} // namespace takt::engine
