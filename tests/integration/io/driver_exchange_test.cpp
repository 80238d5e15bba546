// The scan thread's exchange with a driver's own thread never waits for that thread
// (docs/runtime-control.md, "No lock a lower priority can hold"), with real threads under
// SCHED_FIFO: the modbus-server driver's thread serves a real master on CPU 0 and a task of a
// higher priority than the base cycle preempts it there, wherever it is; the base cycle on CPU 1
// must go on exchanging with the driver as if nothing happened. When the exchange took a lock
// the driver's thread holds while it copies (what every driver did before), a preemption inside
// that copy held the base cycle up for the whole task body.
#include <modbus.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "support/io_test_support.h"

namespace takt::io::test {
namespace {

constexpr std::int64_t kMs = 1'000'000;

std::int64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// This thread under SCHED_FIFO at `priority` (0: leave the scheduler), on `cpu` (-1: any).
bool place(int priority, int cpu) {
    if (priority != 0) {
        sched_param p{};
        p.sched_priority = priority;
        if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0) {
            return false;
        }
    }
    if (cpu < 0) {
        return true;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

TEST(DriverExchange, ATaskPreemptingADriverThreadDoesNotHoldUpTheBaseCycle) {
    if (std::thread::hardware_concurrency() < 2) {
        GTEST_SKIP() << "needs two CPUs";
    }
    const std::uint16_t port = freeTcpPort();
    auto server = makeDriver("modbus-server", fmt::format("listen = '127.0.0.1:{}'", port));
    // The driver's thread inherits the affinity of the thread that starts it: CPU 0.
    cpu_set_t saved;
    pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
    ASSERT_TRUE(place(0, 0));
    std::string error;
    const bool started = server->start(error);
    pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
    ASSERT_TRUE(started) << error;

    std::atomic<bool> done{false}, refused{false};
    std::atomic<std::int64_t> requests{0}, cycles{0}, worstNs{0};
    // Masters keep the driver's thread busy with the requests that copy the most: full reads of
    // 125 holding registers and writes of 123, three connections at once so that a request
    // always waits.
    const auto master = [&] {
        modbus_t* ctx = modbus_new_tcp("127.0.0.1", port);
        modbus_set_response_timeout(ctx, 2, 0);
        std::vector<std::uint16_t> regs(125, 0);
        for (std::uint16_t k = 0; !done.load(); ++k) {
            if (modbus_connect(ctx) != 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                continue;
            }
            while (!done.load()) {
                std::fill(regs.begin(), regs.end(), k++);
                if (modbus_write_registers(ctx, 1024, 123, regs.data()) != 123 ||
                    modbus_read_registers(ctx, 0, 125, regs.data()) != 125) {
                    break;
                }
                requests.fetch_add(2);
            }
            modbus_close(ctx);
        }
        modbus_free(ctx);
    };
    std::vector<std::thread> masters;
    for (int m = 0; m < 3; ++m) {
        masters.emplace_back(master);
    }
    // The base cycle: every millisecond the driver's inputs and outputs, on CPU 1.
    std::thread scan([&] {
        refused = refused || !place(20, 1);
        Image img;
        timespec next{};
        clock_gettime(CLOCK_MONOTONIC, &next);
        while (!done.load()) {
            const std::int64_t t0 = nowNs();
            server->readInputs(img.view());
            server->writeOutputs(img.view());
            const std::int64_t took = nowNs() - t0;
            worstNs = std::max(worstNs.load(), took);
            cycles.fetch_add(1);
            next.tv_nsec += kMs;
            if (next.tv_nsec >= 1'000'000'000) {
                next.tv_nsec -= 1'000'000'000;
                ++next.tv_sec;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
        }
    });
    ASSERT_TRUE(eventually([&] { return requests.load() > 200; })) << "the master got no answers";

    // A task above the base cycle takes CPU 0 for 150 ms at a time: the driver's thread stops
    // wherever it is, inside its side of the exchange or not.
    constexpr int kTrials = 30;
    constexpr std::int64_t kBodyNs = 150 * kMs;
    for (int t = 0; t < kTrials && !refused.load(); ++t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30)); // the driver's thread runs again
        std::thread task([&] {
            refused = refused || !place(30, 0);
            const std::int64_t until = nowNs() + kBodyNs;
            while (nowNs() < until) {
            }
        });
        task.join();
    }
    done = true;
    scan.join();
    for (auto& m : masters) {
        m.join();
    }
    server->stop();
    if (refused.load()) {
        GTEST_SKIP() << "SCHED_FIFO refused: the test needs root (or CAP_SYS_NICE)";
    }
    RecordProperty("worst_exchange_us", static_cast<int>(worstNs.load() / 1000));
    RecordProperty("cycles", static_cast<int>(cycles.load()));
    EXPECT_GT(cycles.load(), kTrials * kBodyNs / kMs / 2) << "the base cycle did not run on";
    EXPECT_LT(worstNs.load(), 50 * kMs) << "one exchange with the driver took " << worstNs.load() / kMs
                                        << " ms while a task preempted the driver's thread";
}

} // namespace
} // namespace takt::io::test
