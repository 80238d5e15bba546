// Where the OPC UA server process runs: off the scan's CPUs unless they are all of takt's, and at
// nice 10, applied to the supervising thread whose children inherit it.
#include <algorithm>
#include <cerrno>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "takt/agent/opcua_placement.h"

namespace takt::agent {
namespace {

TEST(OpcuaPlacement, LeavesOutTheScanCpus) {
    const OpcuaPlacement p = placeOpcua({0, 1, 2, 3}, {1, 3});
    EXPECT_EQ(p.cpus, (std::vector<int>{0, 2}));
    EXPECT_FALSE(p.everyCpu);
}

TEST(OpcuaPlacement, TakesEveryCpuWhenTheScanHasThemAll) {
    const OpcuaPlacement p = placeOpcua({0, 1}, {1, 0, 1});
    EXPECT_EQ(p.cpus, (std::vector<int>{0, 1}));
    EXPECT_TRUE(p.everyCpu);
}

TEST(OpcuaPlacement, WithoutPinsKeepsTaktsCpus) {
    const OpcuaPlacement p = placeOpcua({2, 3}, {});
    EXPECT_EQ(p.cpus, (std::vector<int>{2, 3}));
    EXPECT_FALSE(p.everyCpu);
    // A pin outside takt's mask leaves takt's CPUs as they are.
    EXPECT_EQ(placeOpcua({2, 3}, {7}).cpus, (std::vector<int>{2, 3}));
}

TEST(OpcuaPlacement, CpuListAsProcWritesIt) {
    EXPECT_EQ(cpuList({}), "");
    EXPECT_EQ(cpuList({3}), "3");
    EXPECT_EQ(cpuList({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
    EXPECT_EQ(cpuList({8, 7, 7, 0}), "0,7-8");
}

std::vector<int> threadCpus() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    std::vector<int> out;
    if (::sched_getaffinity(0, sizeof mask, &mask) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (CPU_ISSET(cpu, &mask)) {
                out.push_back(cpu);
            }
        }
    }
    return out;
}

// On a thread of its own: the test's thread keeps its nice level and CPUs.
TEST(OpcuaPlacement, LowersAndMovesTheCallingThread) {
    const std::vector<int> before = threadCpus();
    ASSERT_FALSE(before.empty());
    const std::vector<int> scan = {before.back()};
    std::string line;
    std::vector<int> after;
    int nice = 0;
    // A thread starts at its creator's nice level and the placement never raises priority: a test run
    // under `nice -n 15` expects 15.
    errno = 0;
    const int own = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
    const int expected = errno == 0 ? std::max(own, kOpcuaNice) : kOpcuaNice;
    std::thread([&] {
        line = lowerForOpcua(scan);
        after = threadCpus();
        nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
    }).join();
    EXPECT_EQ(nice, expected);
    EXPECT_EQ(after, placeOpcua(before, scan).cpus) << line;
    if (before.size() > 1) {
        EXPECT_EQ(line, "the server process runs at nice " + std::to_string(expected) + " on CPUs " + cpuList(after) +
                            " (the scan's CPUs " + std::to_string(scan.front()) + " left out)");
    } else {
        EXPECT_NE(line.find("leaves no other CPU"), std::string::npos) << line;
    }
    EXPECT_EQ(threadCpus(), before);
}

// What `takt run` does to its main thread with cpu_affinity: only the CPU mask moves (the nice
// level stays), as placeOpcua says; nothing without pins or with pins outside the mask.
TEST(OpcuaPlacement, MoveOffScanCpusMovesOnlyTheMask) {
    const std::vector<int> before = threadCpus();
    ASSERT_FALSE(before.empty());
    const std::vector<int> scan = {before.back()};
    std::string line, none, outside;
    std::vector<int> after, afterNone;
    int niceBefore = 0, niceAfter = 0;
    std::thread([&] {
        const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
        niceBefore = ::getpriority(PRIO_PROCESS, tid);
        none = moveOffScanCpus({});
        outside = moveOffScanCpus({before.back() + 1});
        afterNone = threadCpus();
        line = moveOffScanCpus(scan);
        after = threadCpus();
        niceAfter = ::getpriority(PRIO_PROCESS, tid);
    }).join();
    EXPECT_EQ(none, "");
    EXPECT_EQ(outside, "");
    EXPECT_EQ(afterNone, before);
    EXPECT_EQ(niceAfter, niceBefore);
    EXPECT_EQ(after, placeOpcua(before, scan).cpus) << line;
    if (before.size() > 1) {
        EXPECT_NE(line.find("run on CPUs " + cpuList(after) + ", off the scan's CPUs " + cpuList(scan)),
                  std::string::npos)
            << line;
    } else {
        EXPECT_NE(line.find("every CPU takt may use"), std::string::npos) << line;
    }
    EXPECT_EQ(threadCpus(), before);
}

} // namespace
} // namespace takt::agent
