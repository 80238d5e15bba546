// The scan loop with a scripted program and a loopback-like process I/O: exchange, overruns,
// watchdog, fault policies, retain hand-over, the CPU latency request.
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>

#include "scan_test_support.h"

namespace takt::engine {
namespace {

using testing::AbortableRunner;
using testing::ByteProgram;
using testing::FakeIo;
using testing::waitFor;

constexpr std::int64_t kMs = 1'000'000;

struct Rig {
    explicit Rig(const ScanOptions& o, std::int64_t taskIntervalNs = 0) : options(o), prog(taskIntervalNs) {
        auto r = std::make_unique<AbortableRunner>();
        runner = r.get();
        engine = std::make_unique<Engine>(std::move(r), clock);
    }
    bool load() {
        FaultReport f;
        return engine->load(std::make_unique<LoadedProgram>(prog.b.build(), ""), f);
    }
    std::uint32_t inOff() const { return prog.in; }
    std::uint32_t outOff() const { return prog.out; }

    ScanOptions options;
    ByteProgram prog;
    CycleClock clock;
    AbortableRunner* runner = nullptr;
    std::unique_ptr<Engine> engine;
    FakeIo io;
};

ScanOptions options(std::int64_t periodMs, std::uint32_t watchdogMs = 0) {
    ScanOptions o;
    o.periodNs = periodMs * kMs;
    o.watchdog.enabled = watchdogMs > 0;
    o.watchdog.timeoutMs = watchdogMs;
    return o;
}

TEST(ScanLoop, ExchangesIoEveryCycleThroughTheProcessImage) {
    Rig rig(options(2));
    const std::uint32_t in = rig.inOff();
    const std::uint32_t out = rig.outOff();
    rig.runner->body = [in, out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        image[out] = static_cast<std::uint8_t>(image[in] + 1);
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= 20; }));
    loop.stop();
    const ScanSnapshot s = loop.snapshot();
    // After the stop the status shows what the field sees: the latched safe image, not the
    // program's last output.
    EXPECT_EQ(s.outputs[0], FakeIo::kSafe);
    // One read per cycle and one after the stop, which shows the latched safe state.
    EXPECT_EQ(rig.io.reads.load(), static_cast<int>(s.cycles) + 1);
    EXPECT_EQ(rig.io.writes.load(), static_cast<int>(s.cycles));
    EXPECT_EQ(s.inputs[0], FakeIo::kSafe);
    EXPECT_EQ(s.state, ScanState::Stopped);
    EXPECT_EQ(loop.execTime().count(), s.cycles);
    EXPECT_EQ(loop.lateness().count(), s.cycles);
    EXPECT_EQ(rig.io.safeCalls.load(), 1);
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
}

TEST(ScanLoop, TimeReadsTheReleaseTimeOnTheMonotonicGrid) {
    Rig rig(options(5));
    std::vector<std::int64_t> seen;
    seen.reserve(64);
    CycleClock* clock = &rig.clock;
    rig.runner->body = [&seen, clock](std::uint8_t*, const std::atomic<bool>*, Fault&) {
        if (seen.size() < 64) {
            seen.push_back(clock->nowNs());
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    const std::int64_t before = monotonicNs();
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= 5; }));
    loop.stop();
    ASSERT_GE(seen.size(), 5u);
    EXPECT_GT(seen[0], before);
    for (std::size_t i = 1; i < seen.size(); ++i) {
        // Releases are one period apart at least (absolute deadlines; a late wake only delays).
        EXPECT_EQ((seen[i] - seen[i - 1]) % (5 * kMs), 0);
        EXPECT_GE(seen[i] - seen[i - 1], 5 * kMs);
    }
}

TEST(ScanLoop, NoOverrunAtAGenerousPeriod) {
    // 200 ms for a cycle of a few microseconds: only a stalled machine would miss a release.
    Rig rig(options(200));
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= 3; }));
    loop.stop();
    EXPECT_EQ(loop.snapshot().overruns, 0u);
    EXPECT_TRUE(loop.events().empty());
}

TEST(ScanLoop, OverrunIsCountedRecordedAndRephased) {
    Rig rig(options(10), 10 * kMs);
    std::atomic<int> calls{0};
    rig.runner->body = [&calls](std::uint8_t*, const std::atomic<bool>*, Fault&) {
        if (calls.fetch_add(1) == 2) {
            // Three and a half periods: the releases at +10, +20 and +30 ms pass while running.
            std::this_thread::sleep_for(std::chrono::milliseconds(35));
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= 6; }));
    loop.stop();
    const ScanSnapshot s = loop.snapshot();
    EXPECT_GE(s.overruns, 1u);
    EXPECT_GE(s.missedReleases, 3u);
    const std::vector<ScanEvent> ev = loop.events();
    ASSERT_FALSE(ev.empty());
    const auto overrun = std::find_if(
        ev.begin(), ev.end(), [](const ScanEvent& e) { return e.kind == ScanEventKind::CycleOverrun && e.cycle == 3; });
    ASSERT_NE(overrun, ev.end());
    EXPECT_GE(overrun->missed, 3u);
    EXPECT_GE(overrun->valueNs, 35 * kMs);
    EXPECT_STREQ(scanEventName(overrun->kind), "cycle_overrun");
    ASSERT_EQ(loop.taskOverruns().size(), 1u);
    EXPECT_GE(loop.taskOverruns()[0], 1u);
    // Re-phased, not caught up: no burst of cycles after the long one.
    EXPECT_EQ(s.cycles, static_cast<std::uint64_t>(calls.load()));
}

TEST(ScanLoop, WatchdogAbortsAnEndlessLoopAndLatchesSafeState) {
    ScanOptions o = options(5, 30);
    o.watchdog.action = FaultAction::SafeHalt;
    Rig rig(o);
    const std::uint32_t out = rig.outOff();
    std::atomic<int> calls{0};
    rig.runner->body = [&calls, out](std::uint8_t* image, const std::atomic<bool>* abort, Fault& f) {
        image[out] = 0x11;
        if (calls.fetch_add(1) < 3) {
            return true;
        }
        while (abort == nullptr || !abort->load()) { // WHILE TRUE DO END_WHILE, with the VM's check
        }
        f.message = "run aborted (watchdog)";
        return false;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    const ScanSnapshot s = loop.snapshot();
    EXPECT_EQ(s.watchdogTrips, 1u);
    EXPECT_EQ(s.faults, 1u);
    // Halted: inputs are still read; the latched safe value is what the field shows.
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().inputs[0] == FakeIo::kSafe; }));
    const auto fault = loop.lastFault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, "watchdog");
    EXPECT_NE(fault->report.message.find("timeout_ms = 30"), std::string::npos) << fault->report.message;
    EXPECT_EQ(fault->action, FaultAction::SafeHalt);
    EXPECT_EQ(calls.load(), 4); // the program is not run again
    loop.stop();
}

// The watchdog wakes once per timeout while the cycles are short (a 100-box fleet on two cores
// spent most of its CPU on watchdog threads polling every 10 ms: 100 wake-ups a second each),
// and still trips a cycle that overruns (the tests above).
TEST(ScanLoop, TheWatchdogLooksOncePerTimeoutWhileCyclesAreShort) {
    Rig rig(options(10, 50));
    rig.runner->body = [](std::uint8_t*, const std::atomic<bool>*, Fault&) { return true; };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= 1; }));
    const std::uint64_t looks0 = loop.watchdogLooks();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::uint64_t looks = loop.watchdogLooks() - looks0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    loop.stop();
    EXPECT_EQ(loop.snapshot().watchdogTrips, 0u);
    // 20 a second at 50 ms; a look that lands in a cycle adds one at that cycle's deadline.
    EXPECT_GE(looks, static_cast<std::uint64_t>(10 * seconds));
    EXPECT_LE(looks, static_cast<std::uint64_t>(30 * seconds)) << looks << " looks in " << seconds << " s";
}

TEST(ScanLoop, WatchdogAppliesSafeStateWhileTheProgramStillDoesNotReturn) {
    Rig rig(options(5, 20));
    std::atomic<bool> release{false};
    std::atomic<int> calls{0};
    rig.runner->body = [&](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        if (calls.fetch_add(1) == 1) {
            while (!release.load()) { // ignores the abort flag (a stuck native call)
            }
            f.message = "stuck";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    const bool safeWhileStuck = waitFor([&] { return rig.io.safeCalls.load() >= 1; });
    EXPECT_TRUE(safeWhileStuck);
    EXPECT_FALSE(release.load());
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_EQ(calls.load(), 2); // still inside the second run
    release = true;
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    loop.stop();
}

TEST(ScanLoop, RuntimeFaultWithSafeHaltStopsTheProgram) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::SafeHalt;
    Rig rig(o);
    std::atomic<int> calls{0};
    rig.runner->body = [&calls](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        if (calls.fetch_add(1) == 3) {
            f.message = "division by zero";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(calls.load(), 4);
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_EQ(rig.io.releases.load(), 0);
    const auto fault = loop.lastFault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, "runtime");
    EXPECT_EQ(fault->report.message, "division by zero");
    loop.stop();
}

TEST(ScanLoop, RuntimeFaultWithHaltAlsoAppliesSafeState) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::Halt;
    Rig rig(o);
    rig.runner->body = [](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        f.message = "array index out of bounds";
        return false;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_EQ(rig.io.safeCalls.load(), 1);
    loop.stop();
}

// A program body that only counts its calls.
AbortableRunner::Body countCalls(std::atomic<int>& calls) {
    return [&calls](std::uint8_t*, const std::atomic<bool>*, Fault&) {
        calls.fetch_add(1);
        return true;
    };
}

// A driver told to fail closed (on_error = "fault") faults: the program stops running before
// its next cycle, the safe state is latched on every driver, and the fault names the driver.
TEST(ScanLoop, DriverFailingClosedFaultsTheRuntimeUnderItsPolicy) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::SafeHalt;
    Rig rig(o);
    std::atomic<int> calls{0};
    rig.runner->body = countCalls(calls);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return calls.load() >= 3; }));
    EXPECT_EQ(rig.io.safeCalls.load(), 0);
    rig.io.failedClosed = true;
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Halted; }));
    const int ran = calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(calls.load(), ran); // halted: the program does not run any more
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_EQ(rig.io.safeCalls.load(), 1);
    const auto fault = loop.lastFault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, "io");
    EXPECT_EQ(fault->report.message, "I/O fault: fake: peer gone");
    EXPECT_EQ(loop.snapshot().faults, 1U);
    const auto events = loop.events();
    EXPECT_TRUE(
        std::any_of(events.begin(), events.end(), [](const ScanEvent& e) { return e.kind == ScanEventKind::IoFault; }));
    loop.stop();
    EXPECT_TRUE(loop.endedHaltedByFault());
}

// Degraded or faulted drivers that do not fail closed (on_error = "warn", the default) leave the
// program running: the summary says so, nothing faults.
TEST(ScanLoop, DriverFaultedWithoutFailingClosedKeepsTheProgramRunning) {
    Rig rig(options(2));
    std::atomic<int> calls{0};
    rig.runner->body = countCalls(calls);
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    rig.io.faulted = true;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return calls.load() >= 10; }));
    EXPECT_EQ(loop.snapshot().state, ScanState::Running);
    EXPECT_FALSE(loop.lastFault().has_value());
    EXPECT_EQ(rig.io.safeCalls.load(), 0);
    loop.stop();
}

TEST(ScanLoop, RuntimeFaultWithRestartColdRestartsAndRuns) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::Restart;
    Rig rig(o);
    const std::uint32_t out = rig.outOff();
    std::atomic<int> calls{0};
    std::atomic<int> highest{0};
    // A counter in the data image; the third cycle after every (re)start faults.
    rig.runner->body = [&, out](std::uint8_t* image, const std::atomic<bool>*, Fault& f) {
        calls.fetch_add(1);
        image[out] = static_cast<std::uint8_t>(image[out] + 1);
        highest.store(std::max<int>(highest.load(), image[out]));
        if (image[out] == 3) {
            f.message = "integer division or MOD by zero";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return calls.load() >= 10; }));
    EXPECT_EQ(loop.snapshot().state, ScanState::Running);
    loop.stop();
    const ScanSnapshot s = loop.snapshot();
    EXPECT_GE(s.restarts, 3u);
    EXPECT_EQ(s.faults, s.restarts);
    EXPECT_EQ(highest.load(), 3); // every restart was cold: the counter started from 0 again
    EXPECT_EQ(rig.io.releases.load(), static_cast<int>(s.restarts)); // safe state held only through each restart
    const auto ev = loop.events();
    EXPECT_TRUE(std::any_of(ev.begin(), ev.end(), [](const ScanEvent& e) { return e.kind == ScanEventKind::Restart; }));
}

TEST(ScanLoop, WatchdogRestartActionRestartsTheProgram) {
    ScanOptions o = options(5, 20);
    o.watchdog.action = FaultAction::Restart;
    Rig rig(o);
    std::atomic<int> calls{0};
    rig.runner->body = [&calls](std::uint8_t*, const std::atomic<bool>* abort, Fault& f) {
        if (calls.fetch_add(1) == 1) {
            while (!abort->load()) {
            }
            f.message = "run aborted (watchdog)";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return calls.load() >= 6; }));
    const ScanSnapshot s = loop.snapshot();
    loop.stop();
    EXPECT_EQ(s.watchdogTrips, 1u);
    EXPECT_EQ(s.restarts, 1u);
    EXPECT_EQ(s.state, ScanState::Running);
}

class CountingSink final : public RetainSink {
public:
    RetainSaveResult save(const bytecode::Module& /*module*/, std::span<const std::uint8_t> image) noexcept override {
        saves.fetch_add(1);
        lastByte.store(image.empty() ? 0 : image[offset]);
        return RetainSaveResult::Saved;
    }
    bool restore(LoadedProgram& /*program*/, std::string& /*message*/) override { return false; }
    std::uint32_t offset = 0;
    std::atomic<int> saves{0};
    std::atomic<int> lastByte{-1};
};

TEST(ScanLoop, RetainSinkGetsSnapshotsAtTheIntervalAndOnStop) {
    ScanOptions o = options(2);
    o.retainIntervalNs = 10 * kMs;
    Rig rig(o);
    const std::uint32_t out = rig.outOff();
    rig.runner->body = [out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        image[out] = static_cast<std::uint8_t>(image[out] + 1);
        return true;
    };
    ASSERT_TRUE(rig.load());
    CountingSink sink;
    sink.offset = out;
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    loop.setRetainSink(&sink);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return sink.saves.load() >= 2; }));
    loop.stop();
    const int saves = sink.saves.load();
    EXPECT_GE(saves, 3);
    // The last save is the image after the last cycle.
    EXPECT_EQ(sink.lastByte.load(), static_cast<int>(static_cast<std::uint8_t>(loop.snapshot().cycles)));
}

TEST(ScanLoop, StopEndsAStuckProgramWithTheWatchdogOff) {
    Rig rig(options(5));
    std::atomic<int> calls{0};
    rig.runner->body = [&calls](std::uint8_t*, const std::atomic<bool>* abort, Fault& f) {
        if (calls.fetch_add(1) == 1) {
            while (!abort->load()) {
            }
            f.message = "run aborted (watchdog)";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ASSERT_TRUE(waitFor([&] { return calls.load() >= 2; }));
    loop.stop();
    EXPECT_EQ(loop.snapshot().state, ScanState::Stopped);
    EXPECT_EQ(loop.snapshot().faults, 0u); // a stop, not a fault
    EXPECT_FALSE(loop.lastFault().has_value());
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
}

TEST(ScanLoop, StartRefusesWithoutAProgram) {
    Rig rig(options(2));
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    EXPECT_FALSE(loop.start(error));
    EXPECT_EQ(error, "no program loaded");
}

} // namespace
} // namespace takt::engine

namespace takt::engine {
namespace {

// How many of this process's descriptors are open on the PM QoS device.
int cpuLatencyDescriptors() {
    int n = 0;
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        std::error_code link;
        if (std::filesystem::read_symlink(fd.path(), link) == CpuLatencyRequest::kDevice) {
            ++n;
        }
    }
    return n;
}

// The wake-up latency request lives exactly as long as the run: the kernel drops it when its
// descriptor closes.
TEST(ScanLoop, HoldsTheCpuLatencyRequestWhileItRuns) {
    if (::access(CpuLatencyRequest::kDevice, W_OK) != 0) {
        GTEST_SKIP() << CpuLatencyRequest::kDevice << " is not writable here (root, or the package's udev rule)";
    }
    ScanOptions o = options(2);
    o.realtime.cpuDmaLatencyUs = 5;
    Rig rig(o);
    ASSERT_TRUE(rig.load());
    const int before = cpuLatencyDescriptors();
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    EXPECT_EQ(cpuLatencyDescriptors(), before + 1);
    EXPECT_TRUE(loop.warnings().empty()) << loop.warnings().front();
    loop.stop();
    EXPECT_EQ(cpuLatencyDescriptors(), before);
}

TEST(ScanLoop, LeavesTheCpuLatencyAloneWithoutFifoOrWhenToldTo) {
    if (::access(CpuLatencyRequest::kDevice, W_OK) != 0) {
        GTEST_SKIP() << CpuLatencyRequest::kDevice << " is not writable here: nothing would be held either way";
    }
    for (const std::optional<std::int32_t> asked : {std::optional<std::int32_t>{}, std::optional<std::int32_t>{-1}}) {
        ScanOptions o = options(2);
        o.realtime.fifo = asked.has_value(); // `false` under fifo too
        o.realtime.priority = 1;
        o.realtime.cpuDmaLatencyUs = asked;
        Rig rig(o);
        ASSERT_TRUE(rig.load());
        const int before = cpuLatencyDescriptors();
        ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
        std::string error;
        ASSERT_TRUE(loop.start(error)) << error;
        EXPECT_EQ(cpuLatencyDescriptors(), before);
        loop.stop();
    }
}

} // namespace
} // namespace takt::engine
