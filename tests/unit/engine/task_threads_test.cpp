// Tasks that preempt: every TASK of a CONFIGURATION on a scan thread of its own, released at
// its own interval on absolute CLOCK_MONOTONIC deadlines, with real threads and real time.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include <sched.h>

#include <gtest/gtest.h>

#include "scan_test_support.h"

namespace takt::engine {
namespace {

using bytecode::ValueKind;
using testing::FakeIo;
using testing::ModuleBuilder;
using testing::waitFor;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::size_t kMaxTasks = 4;

// What each task's body does, shared by the runner of every task thread.
struct Script {
    std::array<std::atomic<int>, kMaxTasks> runs{};            // bodies run, per task
    std::array<std::atomic<std::int64_t>, kMaxTasks> spinNs{}; // busy time per run, per task
    std::array<std::atomic<bool>, kMaxTasks> faultNext{};      // the next run of the task faults
    // Order of runs: task indices, as far as there is room.
    std::array<std::atomic<int>, 64> order{};
    std::atomic<int> orderLen{0};
    std::atomic<int> unboundRuns{0};
    // Task 0 toggles the BOOL at `trigger` every `togglePeriod` of its runs (0: never) and counts
    // the rising edges it made.
    std::uint32_t trigger = 0;
    std::atomic<int> togglePeriod{0};
    std::atomic<int> edges{0};
    std::array<std::atomic<std::uint64_t>, kMaxTasks> cpusSeen{}; // bit per CPU a task's body ran on
};

void spin(std::int64_t ns) {
    const std::int64_t until = monotonicNs() + ns;
    while (monotonicNs() < until) {
    }
}

class ScriptRunner final : public CodeRunner {
public:
    explicit ScriptRunner(std::shared_ptr<Script> script) : script_(std::move(script)) {}
    bool runInit(LoadedProgram& /*p*/, Fault& /*f*/) override { return true; }
    std::unique_ptr<CodeRunner> forTask(std::uint32_t /*slot*/) const override {
        return std::make_unique<ScriptRunner>(script_);
    }
    bool runProgram(LoadedProgram& p, const bytecode::ProgramInstance& inst, std::int64_t /*now*/, Fault& f) override {
        if (inst.task >= kMaxTasks) {
            script_->unboundRuns.fetch_add(1);
            return true;
        }
        const int n = script_->orderLen.fetch_add(1);
        if (n < static_cast<int>(script_->order.size())) {
            script_->order[static_cast<std::size_t>(n)].store(static_cast<int>(inst.task));
        }
        if (const int cpu = sched_getcpu(); cpu >= 0 && cpu < 64) {
            script_->cpusSeen[inst.task].fetch_or(std::uint64_t{1} << cpu);
        }
        spin(script_->spinNs[inst.task].load());
        const int run = script_->runs[inst.task].fetch_add(1) + 1;
        if (inst.task == 0 && script_->togglePeriod.load() > 0 && run % script_->togglePeriod.load() == 0) {
            std::atomic_ref<std::uint8_t> trigger(p.image()[script_->trigger]);
            const bool rising = trigger.load() == 0;
            trigger.store(rising ? 1 : 0);
            if (rising) {
                script_->edges.fetch_add(1);
            }
        }
        if (script_->faultNext[inst.task].exchange(false)) {
            f.message = "scripted fault";
            return false;
        }
        return true;
    }

private:
    std::shared_ptr<Script> script_;
};

struct TaskRig {
    // One PROGRAM instance per task, on a module with the given tasks (interval, priority).
    struct Task {
        std::int64_t intervalNs;
        std::uint32_t priority;
        bool event = false; // SINGLE := the BOOL `trigger`
    };
    TaskRig(std::initializer_list<Task> tasks, const ScanOptions& o) : options(o) {
        const std::uint32_t tBool = b.elementary(ValueKind::Bool, "BOOL", 1);
        trigger = b.global("trigger", tBool);
        script->trigger = trigger;
        const std::uint32_t prog = b.composite(ValueKind::Program, "Prog", {{"x", tBool}});
        for (const Task& t : tasks) {
            const std::uint32_t index = b.task("T" + std::to_string(b.m.tasks.size()), t.intervalNs, t.priority,
                                               t.event ? trigger : bytecode::kNone);
            b.program("P" + std::to_string(index), prog, index);
        }
        engine = std::make_unique<Engine>(std::make_unique<ScriptRunner>(script), clock);
    }
    bool load() {
        FaultReport f;
        return engine->load(std::make_unique<LoadedProgram>(b.build(), ""), f);
    }

    ScanOptions options;
    ModuleBuilder b;
    std::uint32_t trigger = 0;
    std::shared_ptr<Script> script = std::make_shared<Script>();
    CycleClock clock;
    std::unique_ptr<Engine> engine;
    FakeIo io;
};

ScanOptions fifoOptions(std::int64_t periodMs) {
    ScanOptions o;
    o.periodNs = periodMs * kMs;
    o.realtime.fifo = true;
    o.realtime.priority = 40;
    return o;
}

bool fifoRefused(const ScanLoop& loop) {
    for (const std::string& w : loop.warnings()) {
        if (w.find("SCHED_FIFO") != std::string::npos) {
            return true;
        }
    }
    return false;
}

// The starvation case: a 2 ms task beside a 50 ms task whose body takes 12 ms. On one
// cooperative cycle the fast task lost every release that fell inside the slow body.
TEST(TaskThreads, FastTaskKeepsItsReleasesBesideABusySlowTask) {
    TaskRig rig({{2 * kMs, 0}, {50 * kMs, 1}}, fifoOptions(1));
    rig.script->spinNs[1].store(12 * kMs);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    if (fifoRefused(loop)) {
        loop.stop();
        GTEST_SKIP() << "sched_setscheduler(SCHED_FIFO) refused: the test needs root or CAP_SYS_NICE";
    }
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= 1; }));
    const int fast0 = rig.script->runs[0].load();
    const int slow0 = rig.script->runs[1].load();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const int fast1 = rig.script->runs[0].load();
    const int slow1 = rig.script->runs[1].load();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    loop.stop();
    const double releases = seconds / 0.002;
    EXPECT_GE(slow1 - slow0, 15) << "the slow task ran too";
    EXPECT_GE(static_cast<double>(fast1 - fast0), 0.95 * releases)
        << (fast1 - fast0) << " runs of the 2 ms task for " << releases << " releases";
}

TEST(TaskThreads, EventTaskRunsOncePerRisingEdge) {
    // Task 0 (5 ms) raises and drops `trigger` every 4 of its runs: a level of 20 ms that the
    // base cycle (2 ms) samples; task 1 runs on its rising edges only.
    ScanOptions o;
    o.periodNs = 2 * kMs;
    TaskRig rig({{5 * kMs, 0}, {0, 1, true}}, o);
    rig.script->togglePeriod = 4;
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    ASSERT_TRUE(waitFor([&] { return rig.script->edges.load() >= 10; }));
    rig.script->togglePeriod = 0; // no more edges; the last one still reaches the event task
    const int edges = rig.script->edges.load();
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= edges; }, 2.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    loop.stop();
    EXPECT_EQ(rig.script->runs[1].load(), edges);
    ASSERT_NE(loop.taskThread(1), nullptr);
    EXPECT_EQ(loop.taskThread(1)->cycles.load(), static_cast<std::uint64_t>(edges));
    EXPECT_EQ(loop.taskExecTime(1)->count(), static_cast<std::uint64_t>(edges));
}

TEST(TaskThreads, HigherPriorityRunsFirstAtACommonRelease) {
    // Two 10 ms tasks released at the same instant on one CPU: PRIORITY 0 always starts first,
    // whatever the declaration order.
    ScanOptions o = fifoOptions(5);
    o.realtime.cpuAffinity = {0};
    TaskRig rig({{10 * kMs, 3}, {10 * kMs, 0}}, o);
    rig.script->spinNs[0].store(1 * kMs);
    rig.script->spinNs[1].store(1 * kMs);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    if (fifoRefused(loop)) {
        loop.stop();
        GTEST_SKIP() << "sched_setscheduler(SCHED_FIFO) refused: the test needs root or CAP_SYS_NICE";
    }
    ASSERT_TRUE(waitFor([&] { return rig.script->orderLen.load() >= 40; }));
    loop.stop();
    for (std::size_t i = 0; i + 1 < 40; i += 2) {
        EXPECT_EQ(rig.script->order[i].load(), 1) << "run " << i;
        EXPECT_EQ(rig.script->order[i + 1].load(), 0) << "run " << i + 1;
    }
}

TEST(TaskThreads, TaskAffinityPinsATaskToItsOwnCpus) {
    ScanOptions o;
    o.periodNs = 2 * kMs;
    o.realtime.cpuAffinity = {0};
    o.realtime.taskAffinity = {{"t1", {1}}}; // names ignore case
    TaskRig rig({{2 * kMs, 0}, {2 * kMs, 1}}, o);
    rig.script->spinNs[0].store(200'000);
    rig.script->spinNs[1].store(200'000);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    for (const std::string& w : loop.warnings()) {
        if (w.find("affinity") != std::string::npos) {
            loop.stop();
            GTEST_SKIP() << w;
        }
    }
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[0].load() >= 50 && rig.script->runs[1].load() >= 50; }));
    loop.stop();
    EXPECT_EQ(rig.script->cpusSeen[0].load(), 1u) << "T0 runs on cpu_affinity = [0]";
    EXPECT_EQ(rig.script->cpusSeen[1].load(), 2u) << "T1 runs on task_affinity.T1 = [1]";
}

TEST(TaskThreads, FaultInTheSlowTaskAppliesTheFaultPolicy) {
    ScanOptions o;
    o.periodNs = 2 * kMs;
    o.faultPolicy = FaultAction::SafeHalt;
    TaskRig rig({{2 * kMs, 0}, {20 * kMs, 1}}, o);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= 3; }));
    rig.script->faultNext[1].store(true);
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    const int fast = rig.script->runs[0].load();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_LE(rig.script->runs[0].load(), fast + 1) << "the fast task stops with the halt";
    const std::optional<FaultRecord> rec = loop.lastFault();
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->kind, "runtime");
    EXPECT_NE(rec->report.message.find("task T1: scripted fault"), std::string::npos) << rec->report.message;
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_GE(rig.io.safeCalls.load(), 1);
    EXPECT_EQ(loop.snapshot().faults, 1u);
    loop.stop();
}

TEST(TaskThreads, WatchdogTimesATaskOnItsOwnThread) {
    // timeout_ms is every task's budget: the slow task's 80 ms body trips a 20 ms watchdog, which
    // applies the safe state before the body returns and halts the runtime (safe_halt).
    ScanOptions o;
    o.periodNs = 2 * kMs;
    o.watchdog.enabled = true;
    o.watchdog.timeoutMs = 20;
    o.watchdog.action = FaultAction::SafeHalt;
    TaskRig rig({{2 * kMs, 0}, {100 * kMs, 1}}, o);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= 1; }));
    rig.script->spinNs[1].store(80 * kMs);
    ASSERT_TRUE(waitFor([&] { return rig.io.safeCalls.load() >= 1; }));
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    const std::optional<FaultRecord> rec = loop.lastFault();
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->kind, "watchdog");
    EXPECT_NE(rec->report.message.find("task T1"), std::string::npos) << rec->report.message;
    EXPECT_GE(loop.snapshot().watchdogTrips, 1u);
    loop.stop();
}

TEST(TaskThreads, FaultRestartWaitsForEveryTaskAndRunsAgain) {
    ScanOptions o;
    o.periodNs = 2 * kMs;
    o.faultPolicy = FaultAction::Restart;
    TaskRig rig({{2 * kMs, 0}, {20 * kMs, 1}}, o);
    rig.script->spinNs[1].store(5 * kMs);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= 2; }));
    rig.script->faultNext[0].store(true);
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().restarts == 1; }));
    const int slow = rig.script->runs[1].load();
    const int fast = rig.script->runs[0].load();
    ASSERT_TRUE(
        waitFor([&] { return rig.script->runs[1].load() >= slow + 3 && rig.script->runs[0].load() >= fast + 20; }));
    EXPECT_EQ(loop.snapshot().state, ScanState::Running);
    EXPECT_GE(rig.io.releases.load(), 1);
    loop.stop();
}

// 200 online changes while a 2 ms and a 20 ms task run (the slow one busy for 5 ms): each change
// waits until both are parked at a boundary, and neither task loses a cycle.
TEST(TaskThreads, TwoHundredReloadsKeepEveryCycleOfEveryTask) {
    TaskRig rig({{2 * kMs, 0}, {20 * kMs, 1}}, fifoOptions(1));
    rig.script->spinNs[1].store(5 * kMs);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    if (fifoRefused(loop)) {
        loop.stop();
        GTEST_SKIP() << "sched_setscheduler(SCHED_FIFO) refused: the test needs root or CAP_SYS_NICE";
    }
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[1].load() >= 1; }));
    const int fast0 = rig.script->runs[0].load();
    const int slow0 = rig.script->runs[1].load();
    const std::int64_t t0 = monotonicNs();
    std::uint64_t pauseNs = 0;
    for (int i = 0; i < 200; ++i) {
        PreparedChange change = rig.engine->prepareChange(std::make_unique<LoadedProgram>(rig.b.build(), ""), false);
        ASSERT_TRUE(change.ok()) << change.fault.message;
        ScanCommand c;
        c.kind = ScanCommandKind::Reload;
        c.change = &change;
        CommandResult r;
        ASSERT_TRUE(testing::submitAndWait(loop, c, r)) << "reload " << i;
        ASSERT_TRUE(r.ok) << "reload " << i << ": " << (r.refusal != nullptr ? r.refusal : "");
        pauseNs = std::max<std::uint64_t>(pauseNs, static_cast<std::uint64_t>(r.change.pauseNs));
    }
    const int fast1 = rig.script->runs[0].load();
    const int slow1 = rig.script->runs[1].load();
    const std::int64_t t1 = monotonicNs();
    loop.stop();
    EXPECT_EQ(loop.snapshot().reloads, 200u);
    // A change costs a task a release only when its park outlasts the task's interval (a release
    // that falls due while parked runs late, not lost): the fast task's parks stay shorter than
    // its 2 ms (0.1-0.8 ms measured), so no change took one of its releases.
    const double seconds = static_cast<double>(t1 - t0) / 1e9;
    EXPECT_LT(loop.taskThread(0)->maxPauseNs.load(), 2 * kMs);
    EXPECT_EQ(loop.taskThread(1)->missed.load(), 0u);
    // Every release in the window ran (one at each end may fall outside it), but for the few a
    // virtual machine's vCPU takes by not being scheduled: the same rig without any reload lost
    // one or two releases in about one window of twelve on the 2-vCPU machine the tests run on.
    EXPECT_GE(fast1 - fast0, static_cast<int>(seconds / 0.002 * 0.98) - 2) << "over " << seconds << " s";
    EXPECT_GE(slow1 - slow0, static_cast<int>(seconds / 0.020) - 2) << "over " << seconds << " s";
    std::printf("[ reloads  ] 200 in %.2f s; swap max %.1f us; longest park: fast %.1f us, slow %.1f us; fast "
                "task: %llu late cycle(s), %llu release(s) skipped\n",
                seconds, static_cast<double>(pauseNs) / 1e3,
                static_cast<double>(loop.taskThread(0)->maxPauseNs.load()) / 1e3,
                static_cast<double>(loop.taskThread(1)->maxPauseNs.load()) / 1e3,
                static_cast<unsigned long long>(loop.taskThread(0)->overruns.load()),
                static_cast<unsigned long long>(loop.taskThread(0)->missed.load()));
}

TEST(TaskThreads, AnOnlineChangeOfTheTaskListIsRefused) {
    ScanOptions o;
    o.periodNs = 2 * kMs;
    TaskRig rig({{2 * kMs, 0}, {20 * kMs, 1}}, o);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    rig.b.m.tasks[1].intervalNs = 30 * kMs;
    PreparedChange change = rig.engine->prepareChange(std::make_unique<LoadedProgram>(rig.b.build(), ""), false);
    ASSERT_TRUE(change.ok());
    ScanCommand c;
    c.kind = ScanCommandKind::Reload;
    c.change = &change;
    CommandResult r;
    ASSERT_TRUE(testing::submitAndWait(loop, c, r));
    EXPECT_FALSE(r.ok);
    ASSERT_NE(r.refusal, nullptr);
    EXPECT_NE(std::string(r.refusal).find("the tasks changed"), std::string::npos);
    const int fast = rig.script->runs[0].load();
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[0].load() >= fast + 5; })) << "the tasks run on";
    loop.stop();
    EXPECT_EQ(loop.snapshot().reloads, 0u);
}

TEST(TaskThreads, SingleTaskAndNoTaskKeepTheBaseCycle) {
    ScanOptions o;
    o.periodNs = 2 * kMs;
    TaskRig rig({{4 * kMs, 0}}, o);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    EXPECT_FALSE(loop.taskThreads());
    ASSERT_TRUE(waitFor([&] { return rig.script->runs[0].load() >= 5; }));
    loop.stop();
}

} // namespace
} // namespace takt::engine
