// What value subscriptions cost the scan thread per cycle (value_watch.h): the publication of
// 0, 100 and 1,000 subscribed variables at the cycle boundary, side by side, and the reader's
// copy on the control thread. Figures: docs/performance.md "Value subscriptions".
#include <cstdint>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>

#include "takt/engine/scan_command.h"
#include "takt/engine/value_watch.h"

namespace takt::engine {
namespace {

// `n` variables spread over a 64 KiB data image as a program lays them out: DINTs, REALs as 4
// bytes, a BOOL bit every eighth, an LREAL every sixteenth.
std::vector<ImageRange> spread(std::int64_t n) {
    std::vector<ImageRange> ranges;
    for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(n); ++i) {
        const std::uint32_t offset = (i * 52) % 65000;
        if (i % 8 == 7) {
            ranges.push_back(ImageRange{ImageArea::Data, true, static_cast<std::uint8_t>(i % 8), offset, 1});
        } else if (i % 16 == 15) {
            ranges.push_back(ImageRange{ImageArea::Data, false, 0, offset, 8});
        } else {
            ranges.push_back(ImageRange{ImageArea::Data, false, 0, offset, 4});
        }
    }
    return ranges;
}

// The scan thread's side: what ScanLoop::publishWatch adds to a cycle. Arg 0 is a watch with no
// variable, as the loop holds none at all without subscriptions (then the cost is one pointer test).
void BM_WatchPublish(benchmark::State& state) {
    std::vector<std::uint8_t> image(65536, 7);
    ValueWatch watch(nullptr, spread(state.range(0)));
    std::uint64_t cycle = 0;
    for (auto _ : state) {
        ++image[static_cast<std::size_t>(cycle % 4096) * 16];
        watch.publish(++cycle, [&](ImageArea) { return std::span<std::uint8_t>(image.data(), image.size()); });
        benchmark::ClobberMemory();
    }
    state.counters["bytes"] = static_cast<double>(watch.bytes());
}
BENCHMARK(BM_WatchPublish)->Arg(0)->Arg(100)->Arg(1000);

// No watch at all: the pointer test publishWatch() makes on every cycle without subscriptions.
void BM_WatchNone(benchmark::State& state) {
    ValueWatch* watch = nullptr;
    benchmark::DoNotOptimize(watch);
    std::uint64_t published = 0;
    for (auto _ : state) {
        if (watch != nullptr) {
            ++published;
        }
        benchmark::DoNotOptimize(published);
    }
}
BENCHMARK(BM_WatchNone);

// The control thread's side: one consistent copy of everything published.
void BM_WatchRead(benchmark::State& state) {
    std::vector<std::uint8_t> image(65536, 7);
    ValueWatch watch(nullptr, spread(state.range(0)));
    watch.publish(1, [&](ImageArea) { return std::span<std::uint8_t>(image.data(), image.size()); });
    std::vector<std::uint8_t> out;
    std::uint64_t cycle = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(watch.read(out, cycle));
    }
}
BENCHMARK(BM_WatchRead)->Arg(100)->Arg(1000);

} // namespace
} // namespace takt::engine
