// LineTurn (line_turn.h): drivers sharing a serial line get it in the order they asked.
#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "line_turn.h"
#include "support/wait.h"

namespace takt::io::detail {
namespace {

// The driver retrying a silent slave gives the line back and asks again at once; the driver
// that was already waiting gets it first. A std::mutex lets the one that unlocked win again
// (and on a loaded machine, again and again).
TEST(LineTurn, OneWhoWaitsGetsTheTurnBeforeOneWhoAsksAgain) {
    for (int round = 0; round < 50; ++round) {
        LineTurn turn;
        std::atomic<bool> otherHadIt = false;
        turn.lock();
        std::thread other([&] {
            const std::lock_guard held(turn);
            otherHadIt = true;
        });
        ASSERT_TRUE(takt::test::waitUntil([&] { return turn.waiting() == 1; }, std::chrono::seconds(10),
                                          std::chrono::milliseconds(1)));
        turn.unlock();
        turn.lock(); // asks again at once
        EXPECT_TRUE(otherHadIt) << "round " << round;
        turn.unlock();
        other.join();
    }
}

TEST(LineTurn, CountsTheWaiting) {
    LineTurn turn;
    EXPECT_EQ(turn.waiting(), 0U);
    turn.lock();
    EXPECT_EQ(turn.waiting(), 0U);
    std::thread a([&] { const std::lock_guard held(turn); });
    ASSERT_TRUE(takt::test::waitUntil([&] { return turn.waiting() == 1; }, std::chrono::seconds(10),
                                      std::chrono::milliseconds(1)));
    turn.unlock();
    a.join();
    EXPECT_EQ(turn.waiting(), 0U);
}

} // namespace
} // namespace takt::io::detail
