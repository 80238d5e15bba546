// How tasks on threads of their own exchange the process image with the base cycle
// (task_exchange.h), and how forces reach them: unit checks of the exchange's rules, a torn-read
// check across real threads, and the scan loop with real task threads.
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "scan_test_support.h"
#include "takt/engine/task_exchange.h"

namespace takt::engine {
namespace {

using bytecode::IoArea;
using bytecode::IoBinding;
using bytecode::ValueKind;
using testing::FakeIo;
using testing::ModuleBuilder;
using testing::waitFor;

constexpr std::int64_t kMs = 1'000'000;

// A module with one task whose bindings are given; the data image is a plain array here.
struct OneTask {
    bytecode::Module m;
    bytecode::TaskEntry& task() { return m.tasks[0]; }
    explicit OneTask(std::vector<IoBinding> io) {
        m.io = std::move(io);
        bytecode::TaskEntry t;
        t.name = "T";
        for (std::uint32_t i = 0; i < m.io.size(); ++i) {
            t.io.push_back(i);
        }
        m.tasks.push_back(t);
    }
};

IoBinding binding(IoArea area, std::uint32_t byte, std::uint8_t bit, std::uint32_t size, std::uint32_t imageOffset) {
    return IoBinding{area, byte, bit, size, imageOffset, 0, "", ""};
}

TEST(TaskExchange, ADriverWriteToAMemoryAddressTheTaskOnlyReadsIsKept) {
    // A Modbus master writes %MB0 (a set-point) while the task only reads it: the task's copy,
    // taken before the write, must not go back over it.
    OneTask rig({binding(IoArea::Memory, 0, 0, 1, 0)});
    TaskExchange x;
    x.size(rig.task(), 0, 0, 4);
    std::vector<std::uint8_t> inputs, outputs, memory{5, 0, 0, 0};
    std::array<std::uint8_t, 8> image{};
    x.publish(inputs, memory);
    x.copyIn(rig.m, rig.task(), image.data());
    EXPECT_EQ(image[0], 5);
    memory[0] = 9; // the driver's write, after the task read
    x.copyOut(rig.m, rig.task(), image.data());
    x.merge(rig.m, rig.task(), outputs, memory);
    EXPECT_EQ(memory[0], 9) << "the task's unchanged copy went back over the driver's write";
}

TEST(TaskExchange, AMemoryValueTheTaskWroteIsKeptUntilTheBaseTookIt) {
    OneTask rig({binding(IoArea::Memory, 0, 0, 1, 0)});
    TaskExchange x;
    x.size(rig.task(), 0, 0, 4);
    std::vector<std::uint8_t> inputs, outputs, memory{5, 0, 0, 0};
    std::array<std::uint8_t, 8> image{};
    x.publish(inputs, memory);
    x.copyIn(rig.m, rig.task(), image.data());
    image[0] = 7; // the program writes
    x.copyOut(rig.m, rig.task(), image.data());
    // The task runs again before the base cycle took the value: it keeps its own 7, not the 5
    // of the inputs published before, and hands it over again although it did not write it.
    x.copyIn(rig.m, rig.task(), image.data());
    EXPECT_EQ(image[0], 7);
    x.copyOut(rig.m, rig.task(), image.data());
    EXPECT_TRUE(x.merge(rig.m, rig.task(), outputs, memory));
    EXPECT_EQ(memory[0], 7);
    x.publish(inputs, memory);
    x.copyIn(rig.m, rig.task(), image.data());
    EXPECT_EQ(image[0], 7);
    // Taken: from now on a driver's write reaches the task again.
    x.copyOut(rig.m, rig.task(), image.data());
    x.merge(rig.m, rig.task(), outputs, memory);
    memory[0] = 11;
    x.publish(inputs, memory);
    x.copyIn(rig.m, rig.task(), image.data());
    EXPECT_EQ(image[0], 11);
}

TEST(TaskExchange, TwoTasksShareTheBitsOfOneOutputByte) {
    // Task A owns %QX0.0 and task B %QX0.1: each hands over its bit alone.
    bytecode::Module m;
    m.io = {binding(IoArea::Output, 0, 0, 0, 0), binding(IoArea::Output, 0, 1, 0, 1)};
    m.tasks.resize(2);
    m.tasks[0].io = {0};
    m.tasks[1].io = {1};
    TaskExchange a, b;
    a.size(m.tasks[0], 0, 1, 0);
    b.size(m.tasks[1], 0, 1, 0);
    std::vector<std::uint8_t> inputs, outputs{0}, memory;
    std::array<std::uint8_t, 2> image{1, 1};
    a.copyOut(m, m.tasks[0], image.data());
    b.copyOut(m, m.tasks[1], image.data());
    a.merge(m, m.tasks[0], outputs, memory);
    b.merge(m, m.tasks[1], outputs, memory);
    EXPECT_EQ(outputs[0], 0b11);
    image[0] = 0;
    a.copyOut(m, m.tasks[0], image.data());
    a.merge(m, m.tasks[0], outputs, memory);
    EXPECT_EQ(outputs[0], 0b10) << "task A's cleared bit took task B's with it";
}

TEST(TaskExchange, ATaskNeverReadsAHalfWrittenSetOfInputs) {
    // The base cycle publishes %ID0..%ID1 (8 bytes, every byte the same count) as fast as it
    // can while a task thread reads them: every read is one whole publication.
    OneTask rig({binding(IoArea::Input, 0, 0, 8, 0)});
    TaskExchange x;
    x.size(rig.task(), 8, 0, 0);
    std::vector<std::uint8_t> inputs(8, 0), memory;
    x.publish(inputs, memory);
    std::atomic<bool> done{false};
    std::atomic<long> torn{0}, reads{0};
    std::thread task([&] {
        std::array<std::uint8_t, 8> image{};
        while (!done.load()) {
            x.copyIn(rig.m, rig.task(), image.data());
            for (const std::uint8_t v : image) {
                if (v != image[0]) {
                    torn.fetch_add(1);
                    break;
                }
            }
            reads.fetch_add(1);
        }
    });
    for (int i = 0; i < 1'000'000; ++i) {
        std::memset(inputs.data(), i & 0xFF, inputs.size());
        x.publish(inputs, memory);
    }
    done.store(true);
    task.join();
    EXPECT_GT(reads.load(), 0);
    EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
}

// Runs a lambda per task in place of the POU bodies, on every task thread.
struct Bodies {
    std::array<std::function<void(std::uint8_t* image)>, 2> task;
    std::array<std::atomic<int>, 2> runs{};
    std::array<std::atomic<bool>, 2> inBody{};
};

class BodyRunner final : public CodeRunner {
public:
    explicit BodyRunner(std::shared_ptr<Bodies> bodies) : bodies_(std::move(bodies)) {}
    bool runInit(LoadedProgram& /*p*/, Fault& /*f*/) override { return true; }
    std::unique_ptr<CodeRunner> forTask(std::uint32_t /*slot*/) const override {
        return std::make_unique<BodyRunner>(bodies_);
    }
    bool runProgram(LoadedProgram& p, const bytecode::ProgramInstance& inst, std::int64_t /*now*/,
                    Fault& /*f*/) override {
        if (inst.task < 2) {
            bodies_->inBody[inst.task].store(true);
            if (bodies_->task[inst.task]) {
                bodies_->task[inst.task](p.image());
            }
            bodies_->runs[inst.task].fetch_add(1);
            bodies_->inBody[inst.task].store(false);
        }
        return true;
    }

private:
    std::shared_ptr<Bodies> bodies_;
};

// Two tasks on threads (5 ms and 20 ms); task 0's program reads BYTE `in` at %IB0, writes BYTE
// `out` at %QB0 and BYTE `x`.
struct ForceRig {
    ModuleBuilder b;
    std::uint32_t tByte = b.elementary(ValueKind::Byte, "BYTE", 1);
    std::uint32_t in = b.global("in", tByte);
    std::uint32_t out = b.global("out", tByte);
    std::uint32_t x = b.global("x", tByte);
    std::shared_ptr<Bodies> bodies = std::make_shared<Bodies>();
    CycleClock clock;
    FakeIo io;
    std::unique_ptr<Engine> engine;
    ScanOptions options;

    ForceRig() {
        const std::uint32_t prog = b.composite(ValueKind::Program, "Prog", {{"y", tByte}});
        b.program("P0", prog, b.task("Fast", 5 * kMs, 0));
        b.program("P1", prog, b.task("Slow", 20 * kMs, 1));
        b.m.io.push_back(IoBinding{IoArea::Input, 0, 0, 1, in, tByte, "%IB0", "in"});
        b.m.io.push_back(IoBinding{IoArea::Output, 0, 0, 1, out, tByte, "%QB0", "out"});
        b.m.tasks[0].io = {0, 1};
        options.periodNs = 5 * kMs;
        engine = std::make_unique<Engine>(std::make_unique<BodyRunner>(bodies), clock);
    }
    bool load() {
        FaultReport f;
        return engine->load(std::make_unique<LoadedProgram>(b.build(), ""), f);
    }
};

TEST(TaskExchange, ForcesReachAProgramOnItsOwnTaskThread) {
    ForceRig rig;
    std::atomic<int> seenIn{-1}, seenX{-1};
    rig.bodies->task[0] = [&](std::uint8_t* image) {
        seenIn.store(image[rig.in]);
        seenX.store(image[rig.x]);
        image[rig.out] = 5;
        image[rig.x] = 1; // the program writes the forced variable: the force wins
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    ASSERT_TRUE(waitFor([&] { return rig.io.wire(0) == 5; })) << "the task's output reached the field";

    ForceTable forces;
    forces.entries.push_back(ForceEntry{ImageRange{ImageArea::Input, false, 0, 0, 1}, 0});
    forces.entries.push_back(ForceEntry{ImageRange{ImageArea::Data, false, 0, rig.x, 1}, 1});
    forces.entries.push_back(ForceEntry{ImageRange{ImageArea::Output, false, 0, 0, 1}, 2});
    forces.values = {7, 42, 9};
    forces.sizeFieldScratch();
    CommandResult r;
    ASSERT_TRUE(testing::submitAndWait(loop, ScanCommand{.kind = ScanCommandKind::SetForces, .forces = &forces}, r));
    const int runs = rig.bodies->runs[0].load();
    ASSERT_TRUE(waitFor([&] { return rig.bodies->runs[0].load() >= runs + 3; }));
    EXPECT_EQ(seenIn.load(), 7) << "a forced %I reaches the task";
    EXPECT_EQ(seenX.load(), 42) << "a forced variable is forced in the task that writes it";
    EXPECT_TRUE(waitFor([&] { return rig.io.wire(0) == 9; })) << "a forced %Q goes over the task's output";
    int unforced = 0; // the field never sees the task's value while the force holds
    for (int i = 0; i < 200; ++i) {
        unforced += rig.io.wire(0) != 9 ? 1 : 0;
        std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
    EXPECT_EQ(unforced, 0);
    CommandResult unforce;
    ASSERT_TRUE(
        testing::submitAndWait(loop, ScanCommand{.kind = ScanCommandKind::SetForces, .forces = nullptr}, unforce));
    EXPECT_TRUE(waitFor([&] { return rig.io.wire(0) == 5; }));
    loop.stop();
}

TEST(TaskExchange, AReplacedForceTableIsDoneOnlyOnceNoTaskStillRunsUnderIt) {
    // The submitter frees the old table once its SetForces is done: the slow task, in the
    // middle of a 150 ms body, must have left that body first.
    ForceRig rig;
    std::atomic<bool> slow{false}, slowStarted{false};
    rig.bodies->task[1] = [&](std::uint8_t* /*image*/) {
        if (slow.load()) {
            slowStarted.store(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
        }
    };
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    slow.store(true);
    ASSERT_TRUE(waitFor([&] { return slowStarted.load(); }));
    const int finished = rig.bodies->runs[1].load(); // the run in progress is not counted yet

    ForceTable forces;
    forces.entries.push_back(ForceEntry{ImageRange{ImageArea::Data, false, 0, rig.x, 1}, 0});
    forces.values = {1};
    forces.sizeFieldScratch();
    CommandResult r;
    ASSERT_TRUE(testing::submitAndWait(loop, ScanCommand{.kind = ScanCommandKind::SetForces, .forces = &forces}, r));
    EXPECT_GT(rig.bodies->runs[1].load(), finished) << "done while the slow task still ran under the old table";
    slow.store(false);
    loop.stop();
}

TEST(TaskExchange, TheDriversRunAtTheFastestTasksIntervalWhenTheCycleIsSlower) {
    // cycle_interval_ms = 20 with a 5 ms task: the 5 ms task must not see inputs 20 ms old.
    ForceRig rig;
    rig.options.periodNs = 20 * kMs;
    ASSERT_TRUE(rig.load());
    ScanLoop loop(*rig.engine, rig.clock, rig.io, rig.options);
    std::string error;
    ASSERT_TRUE(loop.start(error)) << error;
    ASSERT_TRUE(loop.taskThreads());
    EXPECT_EQ(loop.options().periodNs, 5 * kMs);
    // Counted against the 5 ms task's own cycles rather than the clock, so that a loaded machine,
    // which delays both alike, does not decide: at the 20 ms cycle the drivers would read once per
    // four of its cycles, at the fastest task's interval about once per cycle.
    const int reads0 = rig.io.reads.load();
    const int runs0 = rig.bodies->runs[0].load();
    ASSERT_TRUE(waitFor([&] { return rig.bodies->runs[0].load() >= runs0 + 60; }));
    const int reads = rig.io.reads.load() - reads0;
    const int runs = rig.bodies->runs[0].load() - runs0;
    loop.stop();
    EXPECT_GE(2 * reads, runs) << reads << " input reads in " << runs << " cycles of the 5 ms task";
}

} // namespace
} // namespace takt::engine
