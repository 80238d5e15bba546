// A running scan loop never allocates: this binary counts every operator new while cycles run
// (start and stop, which allocate threads and buffers, are outside the counted window).
#include <atomic>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "scan_test_support.h"

#include "../counting_new.h"

using takt::test::gAllocations;
using takt::test::gCounting;

namespace takt::engine {
namespace {

using testing::AbortableRunner;
using testing::ByteProgram;
using testing::FakeIo;

TEST(ScanNoAllocation, CyclesWithIoStatisticsSnapshotsAndTasksDoNotAllocate) {
    ByteProgram prog(2'000'000);
    auto runner = std::make_unique<AbortableRunner>();
    const std::uint32_t in = prog.in;
    const std::uint32_t out = prog.out;
    runner->body = [in, out](std::uint8_t* image, const std::atomic<bool>*, Fault&) {
        image[out] = static_cast<std::uint8_t>(image[in] + 3);
        return true;
    };
    CycleClock clock;
    Engine engine(std::move(runner), clock);
    FaultReport f;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(prog.b.build(), ""), f));
    FakeIo io;
    ScanOptions o;
    o.periodNs = 1'000'000;
    o.watchdog.enabled = true;
    o.watchdog.timeoutMs = 500;
    ScanLoop loop(engine, clock, io, o);
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

} // namespace
} // namespace takt::engine
