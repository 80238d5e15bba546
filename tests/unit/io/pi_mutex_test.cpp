// The drivers' buffer lock (pi_mutex.h) against priority inversion, with real threads under
// SCHED_FIFO on one CPU: the scan thread (high) waits for the lock a driver thread (normal
// scheduler) holds while a task thread (between the two) keeps the CPU busy.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <gtest/gtest.h>

#include "pi_mutex.h"

namespace takt::io {
namespace {

std::int64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void spinFor(std::int64_t ns) {
    const std::int64_t until = nowNs() + ns;
    while (nowNs() < until) {
    }
}

// This thread on CPU 0, under SCHED_FIFO at `priority` (0: the normal scheduler). The priority
// first: a thread moved onto CPU 0 under the normal scheduler would wait there behind the
// middle thread before it could raise itself.
bool place(int priority) {
    if (priority != 0) {
        sched_param p{};
        p.sched_priority = priority;
        if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0) {
            return false;
        }
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// How long the high thread waited for the lock the low one held while the middle one spun for
// `middleNs`; -1 when SCHED_FIFO is refused or the machine has one CPU.
template <typename Mutex> std::int64_t inversionWaitNs(std::int64_t middleNs) {
    // The test's own thread starts the others from CPU 1: on CPU 0 it would wait behind the
    // middle thread too.
    cpu_set_t saved;
    pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(1, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
        return -1;
    }
    Mutex mutex;
    std::atomic<bool> locked{false}, refused{false}, middleRunning{false};
    std::thread low([&] {
        refused = refused || !place(0);
        const std::lock_guard lock(mutex);
        locked = true;
        spinFor(20'000'000); // the driver thread's copy, made long enough to be preempted in
    });
    while (!locked.load()) {
        std::this_thread::yield();
    }
    std::thread middle([&] {
        refused = refused || !place(10);
        middleRunning = true;
        spinFor(middleNs); // a task body keeping CPU 0 busy
    });
    while (!middleRunning.load()) {
        std::this_thread::yield();
    }
    std::int64_t waited = 0;
    std::thread high([&] {
        refused = refused || !place(20);
        const std::int64_t t0 = nowNs();
        const std::lock_guard lock(mutex);
        waited = nowNs() - t0;
    });
    high.join();
    middle.join();
    low.join();
    pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
    return refused.load() ? -1 : waited;
}

TEST(PiMutex, ADriverThreadHoldingItIsNotStarvedByATaskWhileTheScanThreadWaits) {
    constexpr std::int64_t kMiddleNs = 600'000'000;
    const std::int64_t pi = inversionWaitNs<PiMutex>(kMiddleNs);
    if (pi < 0) {
        GTEST_SKIP() << "SCHED_FIFO refused or one CPU: the test needs root (or CAP_SYS_NICE) and two CPUs";
    }
    // The holder runs at the waiter's priority: the wait is the rest of its 20 ms copy.
    EXPECT_LT(pi, 100'000'000) << "waited " << pi / 1'000'000 << " ms with priority inheritance";
    // The same with a plain mutex waits for the middle thread: what the drivers' lock was.
    const std::int64_t plain = inversionWaitNs<std::mutex>(kMiddleNs);
    EXPECT_GT(plain, 150'000'000) << "waited " << plain / 1'000'000 << " ms with a plain mutex";
}

} // namespace
} // namespace takt::io
