// The time a process was given (given_time.h): /proc/PID/schedstat read, and a starved process
// told apart from one that sleeps.
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "takt/agent/given_time.h"

namespace takt::agent {
namespace {

using namespace std::chrono_literals;

TEST(GivenTime, ReadsTheRunDelayOfASchedstatLine) {
    EXPECT_EQ(parseRunDelay("2343365 48897522 659\n"), std::chrono::nanoseconds(48897522));
    EXPECT_EQ(parseRunDelay("0 0 1"), std::chrono::nanoseconds(0));
    EXPECT_EQ(parseRunDelay(""), std::nullopt);
    EXPECT_EQ(parseRunDelay("12"), std::nullopt);
    EXPECT_EQ(parseRunDelay("12 x 3"), std::nullopt);
    EXPECT_EQ(parseRunDelay("12 -4 3"), std::nullopt);
    EXPECT_EQ(parseRunDelay("12 4x 3"), std::nullopt);
}

TEST(GivenTime, IsTheWallTimeForAProcessThatCannotBeRead) {
    GivenTime t;
    const auto now = GivenTime::Clock::now();
    t.mark(-1, now);
    EXPECT_EQ(t.since(-1, now + 3s), 3s);
    EXPECT_TRUE(t.beyond(-1, now + 3s, 2s));
    EXPECT_FALSE(t.beyond(-1, now + 1s, 2s));
}

// A child that runs `busy` (a loop) or sleeps, pinned to `cpu` at `nice`.
pid_t child(int cpu, int nice, bool busy) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        (void)::sched_setaffinity(0, sizeof set, &set);
        (void)::setpriority(PRIO_PROCESS, 0, nice);
        for (;;) {
            if (!busy) {
                ::pause();
            }
        }
    }
    return pid;
}

void end(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

// The OPC UA server's case: at nice 19 beside a busy process at nice 0 on its one CPU it is
// starved and was given a sliver of the second; a process that sleeps was given all of it.
TEST(GivenTime, AStarvedProcessWasGivenLittleAndASleepingOneAll) {
    cpu_set_t mine;
    ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &mine)) {
        ++cpu;
    }
    const pid_t hog = child(cpu, 0, true);
    const pid_t starved = child(cpu, 19, true);
    const pid_t sleeper = child(cpu, 19, false);
    std::this_thread::sleep_for(100ms); // all three placed
    if (!runDelay(starved)) {
        end(hog);
        end(starved);
        end(sleeper);
        GTEST_SKIP() << "no /proc/PID/schedstat here";
    }
    GivenTime starvedTime, sleeperTime;
    const auto t0 = GivenTime::Clock::now();
    starvedTime.mark(starved, t0);
    sleeperTime.mark(sleeper, t0);
    std::this_thread::sleep_for(1s);
    const auto t1 = GivenTime::Clock::now();
    const auto starvedGiven = starvedTime.since(starved, t1);
    const auto sleeperGiven = sleeperTime.since(sleeper, t1);
    // Past a 500 ms deadline: the sleeper (it had the time), not the starved one (1 s is within
    // the cap of six deadlines).
    const bool starvedBeyond = starvedTime.beyond(starved, t1, 500ms);
    const bool sleeperBeyond = sleeperTime.beyond(sleeper, t1, 500ms);
    end(hog);
    end(starved);
    end(sleeper);
    // nice 19 against nice 0 is a weight of 15 against 1024: about 1.5 % of the CPU.
    EXPECT_LT(starvedGiven, 300ms) << std::chrono::duration_cast<std::chrono::milliseconds>(starvedGiven).count();
    EXPECT_GT(sleeperGiven, 900ms) << std::chrono::duration_cast<std::chrono::milliseconds>(sleeperGiven).count();
    EXPECT_FALSE(starvedBeyond);
    EXPECT_TRUE(sleeperBeyond);
}

} // namespace
} // namespace takt::agent
