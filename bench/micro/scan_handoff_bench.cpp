// The scan side of the control hand-off (scan_command.h): what the scan thread pays at every
// cycle boundary for the command queue, and what a busy control thread does to the start
// lateness of a 1 ms scan loop. Figures: bench/notes/handoff.md.
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>

#include "../../tests/unit/engine/scan_test_support.h"
#include "takt/engine/scan_command.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/spsc_queue.h"

namespace takt::engine {
namespace {

using Queue = SpscQueue<ScanCommand, ScanLoop::kCommandCapacity>;

// applyCommands() with nothing queued: one front() on an empty ring.
void BM_HandoffEmptyQueue(benchmark::State& state) {
    Queue q;
    for (auto _ : state) {
        benchmark::DoNotOptimize(q.front());
    }
}
BENCHMARK(BM_HandoffEmptyQueue);

// One push by the control side and the pop by the scan side, in one thread (no contention):
// the fixed cost of moving one command through the ring.
void BM_HandoffPushPop(benchmark::State& state) {
    Queue q;
    ScanCommand c;
    c.kind = ScanCommandKind::Read;
    for (auto _ : state) {
        q.push(c);
        const ScanCommand* f = q.front();
        benchmark::DoNotOptimize(f);
        q.pop();
    }
}
BENCHMARK(BM_HandoffPushPop);

// The body of a Read or Write command of 8 variables (4 DINTs, 2 BYTEs, 2 BOOL bits) on a 4 KiB
// data image: the range check of every range, then the copies, as the scan thread does them.
struct EightVars {
    std::array<ImageRange, 8> ranges{};
    std::array<std::uint8_t, 4096> image{};
    std::array<std::uint8_t, 4 * 4 + 2 + 2> bytes{};
    EightVars() {
        for (std::uint32_t i = 0; i < 4; ++i) {
            ranges[i] = ImageRange{ImageArea::Data, false, 0, 64 + i * 8, 4};
        }
        ranges[4] = ImageRange{ImageArea::Data, false, 0, 200, 1};
        ranges[5] = ImageRange{ImageArea::Data, false, 0, 208, 1};
        ranges[6] = ImageRange{ImageArea::Data, true, 3, 300, 1};
        ranges[7] = ImageRange{ImageArea::Data, true, 6, 301, 1};
    }
    bool check() const {
        for (const ImageRange& r : ranges) {
            if (r.offset + r.valueBytes() > image.size() || (r.isBit && r.bit > 7)) {
                return false;
            }
        }
        return true;
    }
};

void BM_HandoffRead8(benchmark::State& state) {
    EightVars v;
    for (auto _ : state) {
        if (v.check()) {
            std::uint32_t at = 0;
            for (const ImageRange& r : v.ranges) {
                readRange(r, v.image.data(), v.bytes.data() + at);
                at += r.valueBytes();
            }
        }
        benchmark::DoNotOptimize(v.bytes.data());
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_HandoffRead8);

void BM_HandoffWrite8(benchmark::State& state) {
    EightVars v;
    v.bytes.fill(1);
    for (auto _ : state) {
        if (v.check()) {
            std::uint32_t at = 0;
            for (const ImageRange& r : v.ranges) {
                writeRange(r, v.bytes.data() + at, v.image.data());
                at += r.valueBytes();
            }
        }
        benchmark::DoNotOptimize(v.image.data());
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_HandoffWrite8);

// Two threads: the producer pushes, the consumer pops; items per second across the ring.
void BM_HandoffTwoThreads(benchmark::State& state) {
    constexpr std::uint64_t kBatch = 100'000;
    for (auto _ : state) {
        Queue q;
        std::thread producer([&q] {
            ScanCommand c;
            for (std::uint64_t i = 0; i < kBatch;) {
                c.count = static_cast<std::uint32_t>(i);
                if (q.push(c)) {
                    ++i;
                }
            }
        });
        for (std::uint64_t got = 0; got < kBatch;) {
            if (q.front() != nullptr) {
                q.pop();
                ++got;
            }
        }
        producer.join();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_HandoffTwoThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

// A 1 ms scan loop for 3 s, with a control thread submitting `rate` Read commands of 8
// variables per second (0: none). Reports the start lateness p50/p99/max and the commands done.
void BM_HandoffLoopLateness(benchmark::State& state) {
    const auto rate = static_cast<int>(state.range(0));
    for (auto _ : state) {
        ScanOptions o;
        o.periodNs = 1'000'000;
        testing::ByteLoopRig rig(1, o);
        if (!rig.loaded) {
            state.SkipWithError("load failed");
            return;
        }
        ScanLoop& loop = *rig.loop;
        const std::uint32_t out = rig.prog.out;
        std::array<ImageRange, 8> ranges{};
        for (std::uint32_t i = 0; i < 8; ++i) {
            ranges[i] = ImageRange{i % 2 == 0 ? ImageArea::Data : ImageArea::Input, false, 0, i % 2 == 0 ? out : i, 1};
        }
        std::array<std::uint8_t, 8> bytes{};
        CommandResult result;
        ScanCommand cmd;
        cmd.kind = ScanCommandKind::Read;
        cmd.ranges = ranges.data();
        cmd.rangeCount = 8;
        cmd.readBytes = bytes.data();
        cmd.result = &result;
        std::string error;
        if (!loop.start(error)) {
            state.SkipWithError(error.c_str());
            return;
        }
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        if (rate > 0) {
            const auto gap = std::chrono::nanoseconds(1'000'000'000 / rate);
            auto next = std::chrono::steady_clock::now();
            while (std::chrono::steady_clock::now() < until) {
                // One command in flight at a time, as one control session submits them.
                if (loop.commandsDone() == loop.commandsSubmitted()) {
                    loop.submit(cmd);
                }
                next += gap;
                std::this_thread::sleep_until(next);
            }
        } else {
            std::this_thread::sleep_until(until);
        }
        loop.stop();
        state.counters["p50_us"] = static_cast<double>(loop.lateness().percentile(0.50)) / 1e3;
        state.counters["p99_us"] = static_cast<double>(loop.lateness().percentile(0.99)) / 1e3;
        state.counters["max_us"] = static_cast<double>(loop.lateness().percentile(1.0)) / 1e3;
        state.counters["cycles"] = static_cast<double>(loop.snapshot().cycles);
        state.counters["commands"] = static_cast<double>(loop.commandsDone());
    }
}
BENCHMARK(BM_HandoffLoopLateness)
    ->Arg(0)
    ->Arg(800)
    ->Arg(0)
    ->Arg(800)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
} // namespace takt::engine
