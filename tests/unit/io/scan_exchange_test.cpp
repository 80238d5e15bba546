// OutputExchange (scan_exchange.h): the outputs a driver's thread takes from the scan thread and
// the safe state any thread latches over them, without a lock on either side.
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

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
    x.latchSafe(safe);
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
        const std::array<std::uint8_t, 2> safe{0xAA, 0x55};
        x.latchSafe(safe);
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

} // namespace
} // namespace takt::io::detail
