// Commands handed from a control thread to a running scan loop through the SPSC queue: state
// changes (pause, resume, step, stop, start, restart), image reads and writes, forces, online
// change, bounded fault restarts and per-task statistics. Real threads, a real ScanLoop, a
// scripted program; every wait polls a condition with a generous timeout.
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include "scan_test_support.h"

namespace takt::engine {
namespace {

using bytecode::IoArea;
using testing::AbortableRunner;
using testing::ByteProgram;
using testing::FakeIo;
using testing::ModuleBuilder;
using testing::submitAndWait;
using testing::ValueKind;
using testing::waitFor;

constexpr std::int64_t kMs = 1'000'000;

ScanOptions options(std::int64_t periodMs) {
    ScanOptions o;
    o.periodNs = periodMs * kMs;
    o.watchdog.enabled = false;
    return o;
}

// ByteProgram (in %IB0, out %QB0) plus a RETAIN byte `keep`, a plain byte `plain` (initial
// value 7) and a DINT `word` the program never touches.
struct Rig {
    explicit Rig(const ScanOptions& o) : options(o) {
        keep = prog.b.global("keep", prog.tByte, true);
        plain = prog.b.global("plain", prog.tByte);
        const std::uint32_t tDint = prog.b.elementary(ValueKind::DInt, "DINT", 4);
        word = prog.b.global("word", tDint);
        prog.b.init<std::uint8_t>(plain, 7);
        auto r = std::make_unique<AbortableRunner>();
        runner = r.get();
        engine = std::make_unique<Engine>(std::move(r), clock);
    }
    bool load() {
        FaultReport f;
        return engine->load(std::make_unique<LoadedProgram>(prog.b.build(), "h1"), f);
    }
    bool startLoop(RetainSink* sink = nullptr) {
        loop = std::make_unique<ScanLoop>(*engine, clock, io, options);
        loop->setRetainSink(sink);
        std::string error;
        const bool ok = loop->start(error);
        EXPECT_TRUE(ok) << error;
        return ok;
    }
    ScanSnapshot snap() const { return loop->snapshot(); }
    // Submits and waits until the scan thread counted it done.
    bool run(const ScanCommand& c, CommandResult& r) { return submitAndWait(*loop, c, r); }
    CommandResult run(ScanCommandKind kind) {
        CommandResult r;
        ScanCommand c;
        c.kind = kind;
        EXPECT_TRUE(run(c, r)) << "command not applied";
        return r;
    }
    // Waits for `n` more cycle boundaries (process-image reads), whether the program runs or not.
    bool boundaries(int n) {
        const int from = io.reads.load();
        return waitFor([&] { return io.reads.load() >= from + n; });
    }

    ScanOptions options;
    ByteProgram prog;
    std::uint32_t keep = 0, plain = 0, word = 0;
    CycleClock clock;
    AbortableRunner* runner = nullptr;
    std::unique_ptr<Engine> engine;
    FakeIo io;
    std::unique_ptr<ScanLoop> loop;
};

ImageRange dataRange(std::uint32_t offset, std::uint32_t size) {
    return ImageRange{ImageArea::Data, false, 0, offset, size};
}
ImageRange areaBytes(ImageArea a, std::uint32_t offset, std::uint32_t size) {
    return ImageRange{a, false, 0, offset, size};
}
ImageRange areaBit(ImageArea a, std::uint32_t offset, std::uint8_t bit) {
    return ImageRange{a, true, bit, offset, 1};
}

// A counting program: every run adds one to `out` and counts the run.
void countingBody(Rig& rig, std::atomic<int>& runs) {
    const std::uint32_t out = rig.prog.out;
    rig.runner->body = [&runs, out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        image[out] = static_cast<std::uint8_t>(image[out] + 1);
        runs.fetch_add(1);
        return true;
    };
}

bool hasEvent(const ScanLoop& loop, ScanEventKind k) {
    const auto ev = loop.events();
    return std::any_of(ev.begin(), ev.end(), [k](const ScanEvent& e) { return e.kind == k; });
}

TEST(ScanCommand, PauseHoldsOutputsAndStopsRunningTheProgramResumeRunsAgain) {
    Rig rig(options(2));
    std::atomic<int> runs{0};
    countingBody(rig, runs);
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return runs.load() >= 3; }));

    const CommandResult paused = rig.run(ScanCommandKind::Pause);
    EXPECT_TRUE(paused.ok);
    EXPECT_EQ(paused.refusal, nullptr);
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Paused; }));
    const int runsAtPause = runs.load();
    const int writesAtPause = rig.io.writes.load();
    const std::uint8_t wireAtPause = rig.io.wire(0);
    const std::uint64_t cyclesAtPause = rig.snap().cycles;
    ASSERT_TRUE(rig.boundaries(10));
    EXPECT_EQ(runs.load(), runsAtPause);
    EXPECT_EQ(rig.io.writes.load(), writesAtPause);
    EXPECT_EQ(rig.io.wire(0), wireAtPause); // outputs hold, no safe state
    EXPECT_EQ(rig.io.safeCalls.load(), 0);
    EXPECT_EQ(rig.snap().cycles, cyclesAtPause);
    // The result names the cycle it was applied at: the last one that ran.
    EXPECT_EQ(paused.cycle, cyclesAtPause);
    EXPECT_TRUE(hasEvent(*rig.loop, ScanEventKind::Paused));

    // Pausing a paused program is not an error.
    EXPECT_TRUE(rig.run(ScanCommandKind::Pause).ok);

    const CommandResult resumed = rig.run(ScanCommandKind::Resume);
    EXPECT_TRUE(resumed.ok);
    ASSERT_TRUE(waitFor([&] { return runs.load() >= runsAtPause + 5; }));
    EXPECT_EQ(rig.snap().state, ScanState::Running);
    EXPECT_TRUE(hasEvent(*rig.loop, ScanEventKind::Resumed));
    // Resume while running is accepted and changes nothing.
    EXPECT_TRUE(rig.run(ScanCommandKind::Resume).ok);
    EXPECT_EQ(rig.snap().state, ScanState::Running);
    rig.loop->stop();
}

TEST(ScanCommand, StepRunsExactlyNCyclesThenPausesAgain) {
    Rig rig(options(2));
    std::atomic<int> runs{0};
    countingBody(rig, runs);
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());

    // Not paused: refused.
    CommandResult r;
    ScanCommand step;
    step.kind = ScanCommandKind::Step;
    step.count = 3;
    ASSERT_TRUE(rig.run(step, r));
    EXPECT_FALSE(r.ok);
    ASSERT_NE(r.refusal, nullptr);
    EXPECT_NE(std::string(r.refusal).find("paused"), std::string::npos) << r.refusal;

    ASSERT_TRUE(rig.run(ScanCommandKind::Pause).ok);
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Paused; }));
    const int before = runs.load();
    const std::uint64_t cyclesBefore = rig.snap().cycles;

    ScanCommand zero = step;
    zero.count = 0;
    CommandResult rz;
    ASSERT_TRUE(rig.run(zero, rz));
    EXPECT_FALSE(rz.ok);
    EXPECT_STREQ(rz.refusal, "count must be at least 1");

    CommandResult rs;
    ASSERT_TRUE(rig.run(step, rs));
    EXPECT_TRUE(rs.ok);
    ASSERT_TRUE(waitFor([&] { return runs.load() >= before + 3 && rig.snap().state == ScanState::Paused; }));
    ASSERT_TRUE(rig.boundaries(10));
    EXPECT_EQ(runs.load(), before + 3);
    EXPECT_EQ(rig.snap().cycles, cyclesBefore + 3);
    EXPECT_EQ(rig.snap().state, ScanState::Paused);

    // A second step from where the first stopped.
    step.count = 1;
    CommandResult rs1;
    ASSERT_TRUE(rig.run(step, rs1));
    EXPECT_TRUE(rs1.ok);
    ASSERT_TRUE(waitFor([&] { return runs.load() >= before + 4 && rig.snap().state == ScanState::Paused; }));
    ASSERT_TRUE(rig.boundaries(10));
    EXPECT_EQ(runs.load(), before + 4);
    rig.loop->stop();
}

TEST(ScanCommand, AStepThatFaultsUnderTheRestartPolicyEndsPausedNotRunning) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::Restart;
    Rig rig(o);
    std::atomic<bool> faultNext{false};
    std::atomic<int> runs{0};
    rig.runner->body = [&](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        runs.fetch_add(1);
        if (faultNext.exchange(false)) {
            f.message = "division by zero";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(rig.run(ScanCommandKind::Pause).ok);
    const int before = runs.load();
    faultNext = true;
    CommandResult r;
    ScanCommand step;
    step.kind = ScanCommandKind::Step;
    step.count = 5;
    ASSERT_TRUE(rig.run(step, r));
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(waitFor([&] { return rig.snap().restarts == 1u; }));
    ASSERT_TRUE(rig.boundaries(10));
    EXPECT_EQ(rig.snap().state, ScanState::Paused);
    EXPECT_EQ(runs.load(), before + 1); // the faulted cycle ended the step
    rig.loop->stop();
}

TEST(ScanCommand, StopAppliesTheSafeStateAndStartReleasesIt) {
    Rig rig(options(2));
    std::atomic<int> runs{0};
    countingBody(rig, runs);
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return runs.load() >= 3; }));

    const CommandResult stopped = rig.run(ScanCommandKind::Stop);
    EXPECT_TRUE(stopped.ok);
    EXPECT_EQ(rig.io.safeCalls.load(), 1);
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Stopped; }));
    const int runsAtStop = runs.load();
    ASSERT_TRUE(rig.boundaries(10));
    EXPECT_EQ(runs.load(), runsAtStop);
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    EXPECT_TRUE(hasEvent(*rig.loop, ScanEventKind::Stopped));

    // A stopped program is neither paused nor resumed; a second stop changes nothing.
    const CommandResult pause = rig.run(ScanCommandKind::Pause);
    EXPECT_FALSE(pause.ok);
    EXPECT_STREQ(pause.refusal, "the program is stopped");
    const CommandResult resume = rig.run(ScanCommandKind::Resume);
    EXPECT_FALSE(resume.ok);
    EXPECT_NE(std::string(resume.refusal).find("runtime.start"), std::string::npos);
    EXPECT_TRUE(rig.run(ScanCommandKind::Stop).ok);
    EXPECT_EQ(rig.io.safeCalls.load(), 1);

    const CommandResult started = rig.run(ScanCommandKind::Start);
    EXPECT_TRUE(started.ok);
    EXPECT_EQ(rig.io.releases.load(), 1);
    ASSERT_TRUE(waitFor([&] { return runs.load() >= runsAtStop + 3; }));
    // Released: the program's outputs reach the wire again.
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) != FakeIo::kSafe; }));
    EXPECT_EQ(rig.snap().state, ScanState::Running);
    EXPECT_TRUE(hasEvent(*rig.loop, ScanEventKind::Started));
    // Start while running: accepted, nothing released twice.
    EXPECT_TRUE(rig.run(ScanCommandKind::Start).ok);
    EXPECT_EQ(rig.io.releases.load(), 1);
    rig.loop->stop();
}

TEST(ScanCommand, StartPauseResumeAreRefusedOnAHaltedProgramRestartRunsItAgain) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::SafeHalt;
    Rig rig(o);
    std::atomic<bool> faulty{true};
    std::atomic<int> runs{0};
    rig.runner->body = [&](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        runs.fetch_add(1);
        if (faulty.load()) {
            f.message = "division by zero";
            return false;
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Halted; }));

    for (const ScanCommandKind k : {ScanCommandKind::Start, ScanCommandKind::Pause, ScanCommandKind::Resume}) {
        const CommandResult r = rig.run(k);
        EXPECT_FALSE(r.ok);
        ASSERT_NE(r.refusal, nullptr);
        EXPECT_NE(std::string(r.refusal).find("halted"), std::string::npos) << r.refusal;
    }
    EXPECT_EQ(rig.snap().state, ScanState::Halted);
    EXPECT_EQ(rig.io.releases.load(), 0);
    EXPECT_EQ(runs.load(), 1);
    // Stopping a halted program does not clear the fault: Start stays refused.
    EXPECT_TRUE(rig.run(ScanCommandKind::Stop).ok);
    EXPECT_EQ(rig.snap().state, ScanState::Stopped);
    const CommandResult afterStop = rig.run(ScanCommandKind::Start);
    EXPECT_FALSE(afterStop.ok);
    EXPECT_EQ(rig.io.releases.load(), 0);
    EXPECT_EQ(runs.load(), 1);

    faulty = false;
    CommandResult r;
    ScanCommand restart;
    restart.kind = ScanCommandKind::Restart;
    restart.mode = RestartMode::Cold;
    ASSERT_TRUE(rig.run(restart, r));
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(rig.io.releases.load(), 1);
    ASSERT_TRUE(waitFor([&] { return runs.load() >= 4; }));
    EXPECT_EQ(rig.snap().state, ScanState::Running);
    EXPECT_EQ(rig.snap().restarts, 1u);
    rig.loop->stop();
}

TEST(ScanCommand, WarmRestartKeepsRetainValuesColdRestartResetsThem) {
    Rig rig(options(2));
    std::atomic<bool> counting{true};
    const std::uint32_t keep = rig.keep;
    const std::uint32_t plain = rig.plain;
    rig.runner->body = [&counting, keep, plain](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        if (counting.load()) {
            image[keep] = static_cast<std::uint8_t>(image[keep] + 1);
            image[plain] = static_cast<std::uint8_t>(image[plain] + 1);
        }
        return true;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.snap().cycles >= 5; }));
    counting = false;
    ASSERT_TRUE(rig.boundaries(3));

    const std::array<ImageRange, 2> ranges{dataRange(keep, 1), dataRange(plain, 1)};
    std::array<std::uint8_t, 2> before{};
    CommandResult rr;
    ScanCommand read;
    read.kind = ScanCommandKind::Read;
    read.ranges = ranges.data();
    read.rangeCount = 2;
    read.readBytes = before.data();
    ASSERT_TRUE(rig.run(read, rr));
    ASSERT_TRUE(rr.ok);
    ASSERT_GE(before[0], 5);
    ASSERT_NE(before[1], 7);

    CommandResult rw;
    ScanCommand warm;
    warm.kind = ScanCommandKind::Restart;
    warm.mode = RestartMode::Warm;
    ASSERT_TRUE(rig.run(warm, rw));
    EXPECT_TRUE(rw.ok);
    std::array<std::uint8_t, 2> afterWarm{};
    read.readBytes = afterWarm.data();
    ASSERT_TRUE(rig.run(read, rr));
    EXPECT_EQ(afterWarm[0], before[0]); // RETAIN kept
    EXPECT_EQ(afterWarm[1], 7);         // re-initialised

    CommandResult rc;
    ScanCommand cold = warm;
    cold.mode = RestartMode::Cold;
    ASSERT_TRUE(rig.run(cold, rc));
    EXPECT_TRUE(rc.ok);
    std::array<std::uint8_t, 2> afterCold{};
    read.readBytes = afterCold.data();
    ASSERT_TRUE(rig.run(read, rr));
    EXPECT_EQ(afterCold[0], 0);
    EXPECT_EQ(afterCold[1], 7);
    EXPECT_EQ(rig.snap().restarts, 2u);
    EXPECT_TRUE(hasEvent(*rig.loop, ScanEventKind::Restart));
    rig.loop->stop();
}

TEST(ScanCommand, CommandsApplyInFifoOrderAndAreCountedDone) {
    Rig rig(options(2));
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    // Alternating writes and reads of one DINT, all queued before the scan thread sees them:
    // each read must see the write just before it.
    constexpr int kPairs = 20;
    const ImageRange word = dataRange(rig.word, 4);
    std::array<std::int32_t, kPairs> written{};
    std::array<std::int32_t, kPairs> seen{};
    std::array<CommandResult, 2 * kPairs> results{};
    const std::uint64_t doneBefore = rig.loop->commandsDone();
    for (int i = 0; i < kPairs; ++i) {
        written[i] = 1000 + i * 37;
        ScanCommand w;
        w.kind = ScanCommandKind::Write;
        w.ranges = &word;
        w.rangeCount = 1;
        w.writeBytes = reinterpret_cast<const std::uint8_t*>(&written[i]);
        w.result = &results[2 * i];
        ASSERT_TRUE(rig.loop->submit(w));
        ScanCommand r;
        r.kind = ScanCommandKind::Read;
        r.ranges = &word;
        r.rangeCount = 1;
        r.readBytes = reinterpret_cast<std::uint8_t*>(&seen[i]);
        r.result = &results[2 * i + 1];
        ASSERT_TRUE(rig.loop->submit(r));
    }
    const std::uint64_t ticket = rig.loop->commandsSubmitted();
    ASSERT_TRUE(waitFor([&] { return rig.loop->commandsDone() >= ticket; }));
    EXPECT_EQ(rig.loop->commandsDone(), doneBefore + 2 * kPairs);
    EXPECT_EQ(rig.loop->queueDepth(), 0u);
    for (int i = 0; i < kPairs; ++i) {
        EXPECT_EQ(seen[i], written[i]) << i;
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_TRUE(results[i].ok) << i;
        if (i > 0) {
            EXPECT_GE(results[i].cycle, results[i - 1].cycle) << i;
        }
    }
    // The published snapshot catches up with the count.
    ASSERT_TRUE(waitFor([&] { return rig.snap().commandsDone == rig.loop->commandsDone(); }));
    rig.loop->stop();
}

// The control thread sleeps on the wake descriptor instead of polling commandsDone(): it must
// stay quiet while no command is applied and become readable once one is, without waiting for
// the next poll.
// The descriptor signals a cycle that applied commands or recorded an event (a state change, an
// overrun on a loaded machine), and no other: the quiet checks hold only over cycles that recorded
// no event.
TEST(ScanCommand, TheWakeDescriptorSignalsOnlyCyclesThatAppliedCommandsOrRecordedEvents) {
    Rig rig(options(2));
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    const int fd = rig.loop->commandWakeFd();
    ASSERT_GE(fd, 0);
    pollfd p{fd, POLLIN, 0};
    std::uint64_t count = 0;
    const auto drain = [&] {
        if (::poll(&p, 1, 0) == 1) {
            ASSERT_EQ(::read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
        }
    };
    // Five cycles without a command: readable only if one of them recorded an event.
    const auto quietOverFiveCycles = [&](const char* what) {
        drain();
        const std::uint64_t events = rig.loop->eventCount();
        ASSERT_TRUE(rig.boundaries(5));
        if (rig.loop->eventCount() == events) {
            EXPECT_EQ(::poll(&p, 1, 0), 0) << what;
        }
    };
    ASSERT_TRUE(rig.boundaries(5));
    quietOverFiveCycles("readable though no command was submitted and no event recorded");

    drain();
    ScanCommand read;
    read.kind = ScanCommandKind::Read;
    const ImageRange word = dataRange(rig.word, 4);
    std::int32_t seen = 0;
    CommandResult result;
    read.ranges = &word;
    read.rangeCount = 1;
    read.readBytes = reinterpret_cast<std::uint8_t*>(&seen);
    read.result = &result;
    const std::uint64_t events = rig.loop->eventCount();
    ASSERT_TRUE(rig.loop->submit(read));
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "not signalled after the command";
    if (rig.loop->eventCount() == events) {
        EXPECT_GE(rig.loop->commandsDone(), rig.loop->commandsSubmitted()) << "signalled before the command was done";
    }
    ASSERT_EQ(::read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
    EXPECT_GE(count, 1u);
    ASSERT_TRUE(rig.boundaries(2)); // the command was applied at a boundary: done by now
    EXPECT_GE(rig.loop->commandsDone(), rig.loop->commandsSubmitted());
    quietOverFiveCycles("signalled again without a command or an event");
    rig.loop->stop();
}

TEST(ScanCommand, FullQueueRefusesTheSubmission) {
    Rig rig(options(2));
    ASSERT_TRUE(rig.load());
    // Not started: nothing drains the queue.
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::vector<CommandResult> results(ScanLoop::kCommandCapacity + 1);
    for (std::size_t i = 0; i < ScanLoop::kCommandCapacity; ++i) {
        ScanCommand c;
        c.kind = ScanCommandKind::Resume;
        c.result = &results[i];
        ASSERT_TRUE(loop.submit(c)) << i;
    }
    ScanCommand extra;
    extra.kind = ScanCommandKind::Resume;
    extra.result = &results.back();
    EXPECT_FALSE(loop.submit(extra));
    EXPECT_EQ(loop.commandsSubmitted(), ScanLoop::kCommandCapacity);
    EXPECT_EQ(loop.queueDepth(), ScanLoop::kCommandCapacity);
    // Started, the loop applies the backlog.
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return loop.commandsDone() >= ScanLoop::kCommandCapacity; }));
    loop.stop();
}

TEST(ScanCommand, ReadsAndWritesTheDataImageAndEveryProcessArea) {
    Rig rig(options(2));
    ASSERT_TRUE(rig.load());
    rig.engine->ensureArea(IoArea::Memory, 8);
    ASSERT_TRUE(rig.startLoop());

    // Write: a DINT variable, %MB2..3, %QX1.3 and %MX5.6 (a bit among set neighbours).
    const std::array<ImageRange, 5> wr{dataRange(rig.word, 4), areaBytes(ImageArea::Memory, 2, 2),
                                       areaBit(ImageArea::Output, 1, 3), areaBytes(ImageArea::Memory, 5, 1),
                                       areaBit(ImageArea::Memory, 5, 6)};
    const std::int32_t dint = -123456;
    std::array<std::uint8_t, 4 + 2 + 1 + 1 + 1> in{};
    std::memcpy(in.data(), &dint, 4);
    in[4] = 0xAB;
    in[5] = 0xCD;
    in[6] = 1;    // %QX1.3 := TRUE
    in[7] = 0xFF; // %MB5 := 16#FF
    in[8] = 0;    // %MX5.6 := FALSE
    CommandResult r;
    ScanCommand w;
    w.kind = ScanCommandKind::Write;
    w.ranges = wr.data();
    w.rangeCount = static_cast<std::uint32_t>(wr.size());
    w.writeBytes = in.data();
    ASSERT_TRUE(rig.run(w, r));
    ASSERT_TRUE(r.ok) << (r.refusal != nullptr ? r.refusal : "");

    // Read back, plus %QB1 whole, %MX5.6 and %MX5.7 as bits; and the loopback: %QX1.3 reaches
    // the wire and comes back as %IX1.3.
    const std::array<ImageRange, 6> rd{dataRange(rig.word, 4),
                                       areaBytes(ImageArea::Memory, 2, 2),
                                       areaBytes(ImageArea::Output, 1, 1),
                                       areaBytes(ImageArea::Memory, 5, 1),
                                       areaBit(ImageArea::Memory, 5, 6),
                                       areaBit(ImageArea::Memory, 5, 7)};
    std::array<std::uint8_t, 4 + 2 + 1 + 1 + 1 + 1> out{};
    ScanCommand rdc;
    rdc.kind = ScanCommandKind::Read;
    rdc.ranges = rd.data();
    rdc.rangeCount = static_cast<std::uint32_t>(rd.size());
    rdc.readBytes = out.data();
    ASSERT_TRUE(rig.run(rdc, r));
    ASSERT_TRUE(r.ok);
    std::int32_t back = 0;
    std::memcpy(&back, out.data(), 4);
    EXPECT_EQ(back, dint);
    EXPECT_EQ(out[4], 0xAB);
    EXPECT_EQ(out[5], 0xCD);
    EXPECT_EQ(out[6], 0x08);
    EXPECT_EQ(out[7], 0xBF); // only bit 6 cleared
    EXPECT_EQ(out[8], 0);
    EXPECT_EQ(out[9], 1);

    const ImageRange inBit = areaBit(ImageArea::Input, 1, 3);
    std::uint8_t bit = 0;
    ScanCommand rin;
    rin.kind = ScanCommandKind::Read;
    rin.ranges = &inBit;
    rin.rangeCount = 1;
    rin.readBytes = &bit;
    ASSERT_TRUE(waitFor([&] { return rig.run(rin, r) && r.ok && bit == 1; }));
    rig.loop->stop();
}

TEST(ScanCommand, OutOfRangeAddressesAreRefusedAndNothingIsWritten) {
    Rig rig(options(2));
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    const std::uint32_t imageSize = static_cast<std::uint32_t>(rig.engine->program().imageSize());

    // A valid range first, then one past the end: the whole write is refused, the first
    // range included.
    const std::array<ImageRange, 2> bad{dataRange(rig.word, 4), dataRange(imageSize - 2, 4)};
    const std::array<std::uint8_t, 8> bytes{1, 2, 3, 4, 5, 6, 7, 8};
    CommandResult r;
    ScanCommand w;
    w.kind = ScanCommandKind::Write;
    w.ranges = bad.data();
    w.rangeCount = 2;
    w.writeBytes = bytes.data();
    ASSERT_TRUE(rig.run(w, r));
    EXPECT_FALSE(r.ok);
    EXPECT_STREQ(r.refusal, "the address is outside the image");

    const ImageRange word = dataRange(rig.word, 4);
    std::int32_t v = -1;
    ScanCommand rd;
    rd.kind = ScanCommandKind::Read;
    rd.ranges = &word;
    rd.rangeCount = 1;
    rd.readBytes = reinterpret_cast<std::uint8_t*>(&v);
    ASSERT_TRUE(rig.run(rd, r));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(v, 0) << "a refused write changed the image";

    // Out of range in each area, a bit number above 7, and %M when there is no %M at all.
    const std::array<ImageRange, 5> refused{
        areaBytes(ImageArea::Input, FakeIo::kBytes - 1, 2), areaBit(ImageArea::Output, FakeIo::kBytes, 0),
        areaBit(ImageArea::Output, 0, 8), areaBytes(ImageArea::Memory, 0, 1), dataRange(imageSize, 1)};
    for (const ImageRange& range : refused) {
        std::array<std::uint8_t, 4> sink{};
        ScanCommand c;
        c.kind = ScanCommandKind::Read;
        c.ranges = &range;
        c.rangeCount = 1;
        c.readBytes = sink.data();
        CommandResult rr;
        ASSERT_TRUE(rig.run(c, rr));
        EXPECT_FALSE(rr.ok) << static_cast<int>(range.area) << " " << range.offset;
        c.kind = ScanCommandKind::Write;
        c.writeBytes = bytes.data();
        ASSERT_TRUE(rig.run(c, rr));
        EXPECT_FALSE(rr.ok) << static_cast<int>(range.area) << " " << range.offset;
    }
    EXPECT_EQ(rig.snap().state, ScanState::Running);
    rig.loop->stop();
}

// One forced range with its value bytes.
std::unique_ptr<ForceTable> forceOne(const ImageRange& range, std::vector<std::uint8_t> value) {
    auto t = std::make_unique<ForceTable>();
    t->entries.push_back(ForceEntry{range, 0});
    t->values = std::move(value);
    return t;
}

CommandResult setForces(Rig& rig, const ForceTable* table) {
    CommandResult r;
    ScanCommand c;
    c.kind = ScanCommandKind::SetForces;
    c.forces = table;
    EXPECT_TRUE(rig.run(c, r));
    return r;
}

TEST(ScanCommand, AForcedInputSurvivesTheDriversRead) {
    Rig rig(options(2));
    const std::uint32_t in = rig.prog.in;
    const std::uint32_t out = rig.prog.out;
    std::atomic<int> seenIn{-1};
    rig.runner->body = [&seenIn, in, out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        seenIn = image[in];
        image[out] = static_cast<std::uint8_t>(image[in] + 1); // loopback: %IB0 would count up
        return true;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.snap().cycles >= 3; }));

    auto table = std::make_unique<ForceTable>();
    table->entries.push_back(ForceEntry{areaBytes(ImageArea::Input, 0, 1), 0});
    table->entries.push_back(ForceEntry{areaBit(ImageArea::Input, 1, 2), 1});
    table->values = {0x42, 1};
    const CommandResult r = setForces(rig, table.get());
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(rig.engine->forces(), table.get());
    ASSERT_TRUE(rig.boundaries(5));
    ASSERT_TRUE(waitFor([&] { return rig.snap().cycles >= r.cycle + 5; }));
    // The driver delivered 0x43 (last cycle's output) every cycle; the program saw the force.
    EXPECT_EQ(seenIn.load(), 0x42);
    EXPECT_EQ(rig.io.wire(0), 0x43);
    const ScanSnapshot s = rig.snap();
    EXPECT_EQ(s.inputs[0], 0x42);
    EXPECT_EQ(s.inputs[1] & 0x04, 0x04); // the bit, while the wire has 0 there
    EXPECT_EQ(rig.io.wire(1) & 0x04, 0);

    // Released: the loopback counts again.
    const CommandResult cleared = setForces(rig, nullptr);
    EXPECT_TRUE(cleared.ok);
    EXPECT_EQ(rig.engine->forces(), nullptr);
    ASSERT_TRUE(waitFor([&] { return seenIn.load() > 0x45; }));
    rig.loop->stop();
}

TEST(ScanCommand, AForcedVariableSurvivesTheProgramWritingIt) {
    Rig rig(options(2));
    std::atomic<int> runs{0};
    countingBody(rig, runs); // writes `out` every cycle
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    const auto table = forceOne(dataRange(rig.prog.out, 1), {0x99});
    const CommandResult r = setForces(rig, table.get());
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(waitFor([&] { return rig.snap().cycles >= r.cycle + 3; }));
    const ImageRange out = dataRange(rig.prog.out, 1);
    std::uint8_t v = 0;
    CommandResult rr;
    ScanCommand rd;
    rd.kind = ScanCommandKind::Read;
    rd.ranges = &out;
    rd.rangeCount = 1;
    rd.readBytes = &v;
    ASSERT_TRUE(rig.run(rd, rr));
    // The program adds one every cycle; the force is written over it again before the outputs
    // are copied, so the image, %QB0 and the wire all hold the forced value.
    EXPECT_EQ(v, 0x99);
    EXPECT_EQ(rig.io.wire(0), 0x99);
    EXPECT_EQ(rig.snap().outputs[0], 0x99);
    setForces(rig, nullptr);
    rig.loop->stop();
}

TEST(ScanCommand, AForcedOutputSurvivesTheCopyOutAndReachesTheDriver) {
    Rig rig(options(2));
    const std::uint32_t out = rig.prog.out;
    rig.runner->body = [out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        image[out] = 0x01;
        return true;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) == 0x01; }));
    const auto table = forceOne(areaBytes(ImageArea::Output, 0, 1), {0x77});
    const CommandResult r = setForces(rig, table.get());
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) == 0x77; }));
    ASSERT_TRUE(waitFor([&] { return rig.snap().cycles >= r.cycle + 5; }));
    EXPECT_EQ(rig.io.wire(0), 0x77);
    EXPECT_EQ(rig.snap().outputs[0], 0x77);

    // A replacement table takes over from the old one.
    const auto second = forceOne(areaBit(ImageArea::Output, 0, 7), {1});
    const CommandResult r2 = setForces(rig, second.get());
    EXPECT_TRUE(r2.ok);
    EXPECT_EQ(rig.engine->forces(), second.get());
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) == 0x81; }));
    const CommandResult r3 = setForces(rig, nullptr);
    EXPECT_TRUE(r3.ok);
    EXPECT_EQ(rig.engine->forces(), nullptr);
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) == 0x01; }));
    rig.loop->stop();
}

// --- Online change ------------------------------------------------------------------------

// Finds `path` in the running program's variables; the counter sits at a different offset in
// each version, so a lost transfer shows as a restart from zero.
std::uint32_t offsetOf(const bytecode::Module& m, const std::string& path) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path == path) {
            return v.offset;
        }
    }
    return bytecode::kNone;
}

// Counts up `count` (UDINT) by one per run and checks that it never skips or repeats.
class CounterRunner final : public CodeRunner {
public:
    bool runInit(LoadedProgram&, Fault&) override { return true; }
    bool runProgram(LoadedProgram& p, const bytecode::ProgramInstance&, std::int64_t, Fault&) override {
        const std::uint32_t off = offsetOf(p.module(), "count");
        std::uint32_t v = 0;
        std::memcpy(&v, p.image() + off, 4);
        const std::uint64_t n = runs.load();
        if (v != n) {
            mismatches.fetch_add(1);
        }
        ++v;
        std::memcpy(p.image() + off, &v, 4);
        lastModule.store(&p.module());
        runs.store(n + 1);
        return true;
    }
    std::atomic<std::uint64_t> runs{0};
    std::atomic<int> mismatches{0};
    std::atomic<const bytecode::Module*> lastModule{nullptr};
};

std::shared_ptr<const bytecode::Module> counterModule(int version) {
    ModuleBuilder b;
    const std::uint32_t tUdint = b.elementary(ValueKind::UDInt, "UDINT", 4);
    for (int i = 0; i < version; ++i) {
        b.global("pad" + std::to_string(i), tUdint); // moves `count`
    }
    b.global("count", tUdint);
    const std::uint32_t prog = b.composite(ValueKind::Program, "Prog", {{"x", tUdint}});
    b.program("P", prog);
    return b.build();
}

// A retain sink whose save() blocks until the test opens the gate.
class GatedSink final : public RetainSink {
public:
    RetainSaveResult save(const bytecode::Module&, std::span<const std::uint8_t>) noexcept override {
        inSave.store(true);
        inSave.notify_all();
        open.wait(false);
        saves.fetch_add(1);
        return RetainSaveResult::Saved;
    }
    bool restore(LoadedProgram&, std::string&) override { return false; }
    void release() {
        open.store(true);
        open.notify_all();
    }
    std::atomic<bool> inSave{false};
    std::atomic<bool> open{false};
    std::atomic<int> saves{0};
};

struct ChangeRig {
    explicit ChangeRig(std::int64_t periodMs) {
        auto r = std::make_unique<CounterRunner>();
        runner = r.get();
        engine = std::make_unique<Engine>(std::move(r), clock);
        FaultReport f;
        EXPECT_TRUE(engine->load(std::make_unique<LoadedProgram>(counterModule(0), "v0"), f));
        options = ScanOptions{};
        options.periodNs = periodMs * kMs;
        options.watchdog.enabled = false;
        options.retainIntervalNs = periodMs * kMs;
    }
    CycleClock clock;
    CounterRunner* runner = nullptr;
    std::unique_ptr<Engine> engine;
    FakeIo io;
    ScanOptions options;
};

TEST(ScanCommand, OnlineChangeThroughTheQueueKeepsCountingByOnePerCycle) {
    ChangeRig rig(1);
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return rig.runner->runs.load() >= 20; }));
    const bytecode::Module* oldModule = &rig.engine->program().module();

    // Prepared on this (control) thread while the scan thread keeps running cycles.
    auto next = std::make_unique<LoadedProgram>(counterModule(3), "v1");
    const bytecode::Module* newModule = &next->module();
    PreparedChange change = rig.engine->prepareChange(std::move(next), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    ASSERT_TRUE(waitFor([&] { return rig.runner->runs.load() >= 30; }));

    CommandResult r;
    ScanCommand reload;
    reload.kind = ScanCommandKind::Reload;
    reload.change = &change;
    ASSERT_TRUE(submitAndWait(loop, reload, r));
    EXPECT_TRUE(r.ok) << (r.refusal != nullptr ? r.refusal : "");
    ASSERT_NE(change.program, nullptr); // handed back: the replaced program
    EXPECT_EQ(&change.program->module(), oldModule);
    EXPECT_EQ(r.change.oldHash, "v0");
    EXPECT_EQ(r.change.newHash, "v1");
    EXPECT_GE(r.change.kept, 1u);
    EXPECT_GE(r.cycle, 30u);
    EXPECT_FALSE(change.ok()); // an applied change cannot be applied again

    const std::uint64_t at = rig.runner->runs.load();
    ASSERT_TRUE(waitFor([&] { return rig.runner->runs.load() >= at + 20; }));
    loop.stop();
    EXPECT_EQ(rig.runner->lastModule.load(), newModule);
    EXPECT_EQ(rig.runner->mismatches.load(), 0) << "a cycle was lost or doubled across the swap";
    EXPECT_EQ(loop.snapshot().reloads, 1u);
    EXPECT_EQ(loop.snapshot().cycles, rig.runner->runs.load());
    const auto ev = loop.events();
    EXPECT_TRUE(
        std::any_of(ev.begin(), ev.end(), [](const ScanEvent& e) { return e.kind == ScanEventKind::ReloadApplied; }));

    // A reload without a prepared change is refused, and so is the same change sent again.
    CommandResult none;
    ASSERT_TRUE(loop.start(error)) << error;
    reload.change = nullptr;
    ASSERT_TRUE(submitAndWait(loop, reload, none));
    EXPECT_FALSE(none.ok);
    EXPECT_STREQ(none.refusal, "no prepared change");
    CommandResult again;
    reload.change = &change;
    ASSERT_TRUE(submitAndWait(loop, reload, again));
    EXPECT_FALSE(again.ok);
    EXPECT_STREQ(again.refusal, "no prepared change");
    EXPECT_EQ(&rig.engine->program().module(), newModule);
    loop.stop();
}

TEST(ScanCommand, OnlineChangeWaitsForTheRetainWriterAndCommandsBehindItWaitToo) {
    ChangeRig rig(1);
    GatedSink sink;
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    loop.setRetainSink(&sink);
    // Whatever happens, the writer must not stay blocked when the loop is stopped.
    struct Opener {
        GatedSink& s;
        ~Opener() { s.release(); }
    } opener{sink};
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return sink.inSave.load(); })); // the writer holds the image copy

    auto next = std::make_unique<LoadedProgram>(counterModule(2), "v1");
    const bytecode::Module* newModule = &next->module();
    const std::size_t newImageSize = next->imageSize();
    PreparedChange change = rig.engine->prepareChange(std::move(next), false);
    ASSERT_TRUE(change.ok()) << change.fault.message;
    EXPECT_EQ(change.retainBuffer.size(), newImageSize); // the retain plan: sized for the new image

    CommandResult reloadResult;
    ScanCommand reload;
    reload.kind = ScanCommandKind::Reload;
    reload.change = &change;
    reload.result = &reloadResult;
    ASSERT_TRUE(loop.submit(reload));
    CommandResult pauseResult;
    ScanCommand pause;
    pause.kind = ScanCommandKind::Pause;
    pause.result = &pauseResult;
    ASSERT_TRUE(loop.submit(pause));
    const std::uint64_t ticket = loop.commandsSubmitted();
    const std::uint64_t doneBefore = loop.commandsDone();

    // The scan thread keeps cycling the old program; neither command lands.
    const std::uint64_t runs0 = rig.runner->runs.load();
    ASSERT_TRUE(waitFor([&] { return rig.runner->runs.load() >= runs0 + 20; }));
    EXPECT_EQ(loop.commandsDone(), doneBefore);
    EXPECT_EQ(loop.queueDepth(), 2u);
    EXPECT_EQ(rig.runner->lastModule.load(), &rig.engine->program().module());
    EXPECT_NE(rig.runner->lastModule.load(), newModule);

    const std::uint64_t cyclesAtRelease = loop.snapshot().cycles;
    sink.release();
    ASSERT_TRUE(waitFor([&] { return loop.commandsDone() >= ticket; }));
    EXPECT_TRUE(reloadResult.ok) << (reloadResult.refusal != nullptr ? reloadResult.refusal : "");
    EXPECT_GE(reloadResult.cycle, cyclesAtRelease);
    ASSERT_NE(change.program, nullptr);
    EXPECT_TRUE(pauseResult.ok);
    EXPECT_GE(pauseResult.cycle, reloadResult.cycle); // applied after the reload, not before
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().state == ScanState::Paused; }));
    // The old hand-off buffer came back (sized for the old image), the new one went in.
    EXPECT_EQ(change.retainBuffer.size(), change.program->imageSize());

    // Resume; the new program runs and the retain writer gets copies of the new image.
    CommandResult resumeResult;
    ScanCommand resume;
    resume.kind = ScanCommandKind::Resume;
    resume.result = &resumeResult;
    ASSERT_TRUE(loop.submit(resume));
    const int savesBefore = sink.saves.load();
    ASSERT_TRUE(waitFor([&] { return sink.saves.load() >= savesBefore + 2; }));
    loop.stop();
    EXPECT_EQ(rig.runner->lastModule.load(), newModule);
    EXPECT_EQ(rig.runner->mismatches.load(), 0);
}

// --- Fault restarts and task statistics ---------------------------------------------------

TEST(ScanCommand, FaultRestartsStopAtTheLimitAndTheFaultSaysWhy) {
    ScanOptions o = options(2);
    o.faultPolicy = FaultAction::Restart;
    o.restartLimit = 3;
    o.restartWindowNs = 60'000 * kMs;
    Rig rig(o);
    std::atomic<int> runs{0};
    rig.runner->body = [&runs](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        runs.fetch_add(1);
        f.message = "division by zero";
        return false;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Halted; }));
    ASSERT_TRUE(rig.boundaries(5));
    const ScanSnapshot s = rig.snap();
    EXPECT_EQ(s.restarts, 3u);
    EXPECT_EQ(s.faults, 4u);
    EXPECT_EQ(runs.load(), 4);
    EXPECT_EQ(rig.io.wire(0), FakeIo::kSafe);
    const auto fault = rig.loop->lastFault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_NE(fault->report.message.find("division by zero"), std::string::npos);
    EXPECT_NE(fault->report.message.find("not restarted: 3 restarts within 60 s"), std::string::npos)
        << fault->report.message;
    rig.loop->stop();
}

TEST(ScanCommand, AboveEightTheRestartLimitStillHolds) {
    // The limit is counted in a ring of recent restart times: a limit above the ring's size
    // must still allow exactly `restartLimit` restarts and say so.
    ScanOptions o = options(1);
    o.faultPolicy = FaultAction::Restart;
    o.restartLimit = 12;
    Rig rig(o);
    rig.runner->body = [](std::uint8_t*, const std::atomic<bool>*, Fault& f) {
        f.message = "array index out of bounds";
        return false;
    };
    ASSERT_TRUE(rig.load());
    ASSERT_TRUE(rig.startLoop());
    ASSERT_TRUE(waitFor([&] { return rig.snap().state == ScanState::Halted; }));
    const auto fault = rig.loop->lastFault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(rig.snap().restarts, 12u);
    EXPECT_NE(fault->report.message.find("not restarted: 12 restarts"), std::string::npos) << fault->report.message;
    rig.loop->stop();
}

// Counts runs per task.
class TaskCountingRunner final : public CodeRunner {
public:
    bool runInit(LoadedProgram&, Fault&) override { return true; }
    bool runProgram(LoadedProgram&, const bytecode::ProgramInstance& inst, std::int64_t, Fault&) override {
        if (inst.task < runs.size()) {
            runs[inst.task].fetch_add(1);
        }
        return true;
    }
    std::array<std::atomic<std::uint64_t>, 2> runs{};
};

TEST(ScanCommand, PerTaskStatisticsCountTheCyclesEachTaskRan) {
    ModuleBuilder b;
    const std::uint32_t tByte = b.elementary(ValueKind::Byte, "BYTE", 1);
    const std::uint32_t fast = b.task("Fast", 2 * kMs, 1);
    const std::uint32_t slow = b.task("Slow", 6 * kMs, 0);
    const std::uint32_t progA = b.composite(ValueKind::Program, "A", {{"x", tByte}});
    const std::uint32_t progB = b.composite(ValueKind::Program, "B", {{"y", tByte}});
    b.program("PA", progA, fast);
    b.program("PB", progB, slow);
    auto r = std::make_unique<TaskCountingRunner>();
    TaskCountingRunner* runner = r.get();
    CycleClock clock;
    Engine engine(std::move(r), clock);
    FaultReport f;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(b.build(), ""), f));
    FakeIo io;
    ScanLoop loop(engine, clock, io, options(2));
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(waitFor([&] { return runner->runs[1].load() >= 5; }));
    loop.stop();
    const std::uint64_t fastRuns = runner->runs[0].load();
    const std::uint64_t slowRuns = runner->runs[1].load();
    ASSERT_NE(loop.taskExecTime(0), nullptr);
    ASSERT_NE(loop.taskExecTime(1), nullptr);
    EXPECT_EQ(loop.taskExecTime(0)->count(), fastRuns);
    EXPECT_EQ(loop.taskLateness(0)->count(), fastRuns);
    EXPECT_EQ(loop.taskExecTime(1)->count(), slowRuns);
    EXPECT_EQ(loop.taskLateness(1)->count(), slowRuns);
    // The slow task's interval is three base periods, so it runs at most as often as the fast
    // one. (How much less depends on how many releases a loaded machine makes the loop miss:
    // the exact every-third schedule is pinned on the virtual clock in engine_test.cpp.)
    EXPECT_GE(fastRuns, slowRuns);
    EXPECT_EQ(loop.taskExecTime(ScanLoop::kMaxTaskStats), nullptr);
    EXPECT_EQ(loop.taskExecTime(2)->count(), 0u);
}

} // namespace
} // namespace takt::engine
