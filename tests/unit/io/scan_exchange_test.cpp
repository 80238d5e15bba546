// OutputExchange (scan_exchange.h): the outputs a driver's thread takes from the scan thread and
// the safe state any thread latches over them, without a lock on either side.
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "scan_exchange.h"

namespace takt::io::detail {
namespace {

using Source = OutputExchange::Source;

void write(OutputExchange& x, std::uint8_t value) {
    ASSERT_TRUE(x.accepting());
    x.back()[0] = value;
    x.back()[1] = value;
    x.publish();
}

TEST(OutputExchange, NothingBeforeTheFirstOutputsThenTheNewest) {
    OutputExchange x;
    x.resize(2, 2);
    EXPECT_EQ(x.take(), Source::None);
    write(x, 1);
    write(x, 2);
    ASSERT_EQ(x.take(), Source::Program);
    EXPECT_EQ(x.program()[0], 2);
}

// The driver's thread may keep the slot it took as long as it likes (a task preempted it in
// the middle of its copy): the scan thread goes on publishing, and what the driver holds does
// not change under it.
TEST(OutputExchange, AReaderHoldingItsSlotNeverStopsTheWriter) {
    OutputExchange x;
    x.resize(2, 2);
    write(x, 7);
    ASSERT_EQ(x.take(), Source::Program);
    const std::uint8_t* held = x.program();
    for (int k = 0; k < 1000; ++k) {
        write(x, static_cast<std::uint8_t>(k));
    }
    EXPECT_EQ(held[0], 7);
    EXPECT_EQ(held[1], 7);
    ASSERT_EQ(x.take(), Source::Program);
    EXPECT_EQ(x.program()[0], static_cast<std::uint8_t>(999));
}

// Latched, the program's outputs are refused and the safe image goes out (zeros past it); after
// a release the safe image stays until the scan thread's next outputs.
TEST(OutputExchange, SafeStateUntilReleasedAndTheNextOutputs) {
    OutputExchange x;
    x.resize(2, 3);
    write(x, 5);
    const std::array<std::uint8_t, 2> safe{9, 8};
    x.setSafe(safe);
    x.latchSafe();
    EXPECT_FALSE(x.accepting());
    EXPECT_EQ(x.latches(), 1U);
    ASSERT_EQ(x.take(), Source::Safe);
    EXPECT_EQ(x.safeImage().size(), 3U);
    EXPECT_EQ(x.safeImage()[0], 9);
    EXPECT_EQ(x.safeImage()[1], 8);
    EXPECT_EQ(x.safeImage()[2], 0);
    x.release();
    EXPECT_EQ(x.take(), Source::Safe); // the outputs from before the latch do not come back
    write(x, 6);
    ASSERT_EQ(x.take(), Source::Program);
    EXPECT_EQ(x.program()[0], 6);
}

// The watchdog latches the safe state while the scan thread is busy publishing: from the moment
// the latch is seen, the driver's thread never sends the program's outputs again.
TEST(OutputExchange, ASafeStateLatchedFromAnotherThreadWinsOverTheScanThread) {
    OutputExchange x;
    x.resize(2, 2);
    const std::array<std::uint8_t, 2> safe{0xAA, 0x55};
    x.setSafe(safe);
    std::atomic<bool> stop{false};
    std::thread scan([&] {
        for (std::uint8_t k = 1; !stop.load(); ++k) {
            if (x.accepting()) {
                x.back()[0] = k;
                x.back()[1] = k;
                x.publish();
            }
        }
    });
    std::thread watchdog([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        x.latchSafe();
    });
    bool sawSafe = false;
    for (int k = 0; k < 2'000'000 && !sawSafe; ++k) {
        const Source s = x.take();
        if (s == Source::Program) {
            EXPECT_EQ(x.program()[0], x.program()[1]); // never a half-written slot
        }
        sawSafe = s == Source::Safe;
    }
    watchdog.join();
    ASSERT_TRUE(sawSafe);
    for (int k = 0; k < 1000; ++k) {
        ASSERT_EQ(x.take(), Source::Safe);
        EXPECT_EQ(x.safeImage()[0], 0xAA);
        EXPECT_EQ(x.safeImage()[1], 0x55);
    }
    stop = true;
    scan.join();
}

// The watchdog and the scan thread's own fault latch may latch at the same moment: whichever
// latch the driver's thread sees first, the image it then sends is the safe image, never the
// zeros of a copy the other latcher has not finished (when the latch still copied the image,
// this failed about one run in four).
TEST(OutputExchange, TwoLatchersAtOnceNeverExposeAnUnfinishedSafeImage) {
    constexpr std::size_t kBytes = 1024 * 1024; // a long copy: a wide window for the race
    std::vector<std::uint8_t> safe(kBytes, 0xA5);
    int wrong = 0;
    for (int round = 0; round < 300; ++round) {
        OutputExchange x;
        x.resize(kBytes, kBytes);
        x.setSafe(safe);
        std::atomic<int> ready{0};
        auto latcher = [&] {
            ready.fetch_add(1);
            while (ready.load() < 2) {
            }
            x.latchSafe();
        };
        std::thread watchdog(latcher);
        std::thread faultLatch(latcher);
        Source s = Source::None;
        for (int k = 0; k < 50'000'000 && s != Source::Safe; ++k) {
            s = x.take();
        }
        watchdog.join();
        faultLatch.join();
        ASSERT_EQ(s, Source::Safe);
        wrong += x.safeImage()[kBytes - 1] != 0xA5 ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0);
}

} // namespace
} // namespace takt::io::detail
