// The publication of subscribed values (value_watch.h): what the scan thread copies at the cycle
// boundary, read consistently by another thread, never for another program's layout, and without
// an allocation on the scan thread (scan_no_alloc_test.cpp).
#include <array>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "scan_test_support.h"
#include "takt/engine/value_watch.h"

namespace takt::engine {
namespace {

using testing::ByteLoopRig;
using testing::submitAndWait;
using testing::waitFor;

std::span<std::uint8_t> spanOf(std::vector<std::uint8_t>& v) {
    return {v.data(), v.size()};
}

TEST(ValueWatch, NothingIsReadBeforeTheFirstPublication) {
    const ValueWatch w(nullptr, {ImageRange{ImageArea::Data, false, 0, 0, 4}});
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    EXPECT_FALSE(w.read(out, cycle));
}

TEST(ValueWatch, PublishesEveryRangePackedInOrderWithTheCycle) {
    std::vector<std::uint8_t> data(64, 0);
    std::vector<std::uint8_t> inputs(4, 0);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i);
    }
    inputs[1] = 0b0000'1000;
    ValueWatch w(nullptr, {ImageRange{ImageArea::Data, false, 0, 10, 4}, ImageRange{ImageArea::Input, true, 3, 1, 1},
                           ImageRange{ImageArea::Data, false, 0, 40, 2}});
    ASSERT_EQ(w.bytes(), 7u);
    EXPECT_EQ(w.at(1), 4u);
    EXPECT_EQ(w.at(2), 5u);
    w.publish(17, [&](ImageArea a) { return a == ImageArea::Data ? spanOf(data) : spanOf(inputs); });
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    ASSERT_TRUE(w.read(out, cycle));
    EXPECT_EQ(cycle, 17u);
    EXPECT_EQ(out, (std::vector<std::uint8_t>{10, 11, 12, 13, 1, 40, 41}));
}

TEST(ValueWatch, ARangeOutsideTheImagePublishesNothing) {
    std::vector<std::uint8_t> data(8, 5);
    ValueWatch w(nullptr, {ImageRange{ImageArea::Data, false, 0, 0, 4}, ImageRange{ImageArea::Data, false, 0, 6, 4}});
    w.publish(1, [&](ImageArea) { return spanOf(data); });
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    EXPECT_FALSE(w.read(out, cycle));
}

// A reader racing the writer never sees a torn set: every published set has all bytes equal.
TEST(ValueWatch, AReaderRacingTheWriterSeesWholeSets) {
    std::vector<std::uint8_t> data(4096, 0);
    std::vector<ImageRange> ranges;
    for (std::uint32_t i = 0; i < 1000; ++i) {
        ranges.push_back(ImageRange{ImageArea::Data, false, 0, i * 4, 4});
    }
    ValueWatch w(nullptr, ranges);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (std::uint64_t c = 1; c <= 5000; ++c) {
            std::fill(data.begin(), data.end(), static_cast<std::uint8_t>(c));
            w.publish(c, [&](ImageArea) { return spanOf(data); });
        }
        done = true;
    });
    std::vector<std::uint8_t> out;
    std::uint64_t reads = 0;
    bool torn = false;
    while (!done.load() && reads < 1'000'000) {
        std::uint64_t cycle = 0;
        if (!w.read(out, cycle)) {
            continue;
        }
        ++reads;
        for (const std::uint8_t b : out) {
            torn = torn || b != static_cast<std::uint8_t>(cycle);
        }
    }
    writer.join();
    EXPECT_FALSE(torn);
    EXPECT_GT(reads, 0u);
}

TEST(ValueWatchOnTheScanLoop, TheLoopPublishesTheWatchedVariablesAfterEveryCycle) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    ByteLoopRig rig(3, o);
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    const bytecode::Module& m = rig.engine->program().module();
    ValueWatch watch(&m, {ImageRange{ImageArea::Data, false, 0, rig.prog.out, 1}});
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ScanCommand set;
    set.kind = ScanCommandKind::SetWatch;
    set.watch = &watch;
    CommandResult r;
    ASSERT_TRUE(submitAndWait(loop, set, r));
    EXPECT_TRUE(r.ok);
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    ASSERT_TRUE(waitFor([&] { return watch.read(out, cycle) && cycle > r.cycle; }));
    ASSERT_EQ(out.size(), 1u);
    // out := in + 3, and FakeIo feeds the outputs back to the inputs: out grows by 3 a cycle, so
    // the value published with a cycle count is the one of that cycle. (How many cycles ran
    // before the watch was set depends on the machine's load: no absolute value is expected.)
    const std::uint64_t first = cycle;
    const std::uint8_t firstValue = out[0];
    // The cycle count moves with the loop, and the value with it.
    EXPECT_TRUE(waitFor([&] { return watch.read(out, cycle) && cycle >= first + 5; }));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(static_cast<std::uint8_t>(out[0] - firstValue), static_cast<std::uint8_t>(3 * (cycle - first)));
    // Taken away: nothing more is published.
    set.watch = nullptr;
    ASSERT_TRUE(submitAndWait(loop, set, r));
    std::uint64_t after = 0;
    ASSERT_TRUE(watch.read(out, after));
    const std::uint64_t until = loop.snapshot().cycles + 5;
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= until; }));
    std::uint64_t later = 0;
    ASSERT_TRUE(watch.read(out, later));
    EXPECT_EQ(later, after);
    loop.stop();
}

// A watch resolved in another program (one an online change replaced) is never published.
TEST(ValueWatchOnTheScanLoop, AWatchOfAnotherProgramIsNotPublished) {
    ScanOptions o;
    o.periodNs = 1'000'000;
    ByteLoopRig rig(3, o);
    ASSERT_TRUE(rig.loaded);
    ScanLoop& loop = *rig.loop;
    const bytecode::Module other;
    ValueWatch watch(&other, {ImageRange{ImageArea::Data, false, 0, rig.prog.out, 1}});
    std::string error;
    ASSERT_TRUE(loop.start(error));
    ScanCommand set;
    set.kind = ScanCommandKind::SetWatch;
    set.watch = &watch;
    CommandResult r;
    ASSERT_TRUE(submitAndWait(loop, set, r));
    const std::uint64_t until = loop.snapshot().cycles + 5;
    ASSERT_TRUE(waitFor([&] { return loop.snapshot().cycles >= until; }));
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    EXPECT_FALSE(watch.read(out, cycle));
    loop.stop();
}

} // namespace
} // namespace takt::engine
