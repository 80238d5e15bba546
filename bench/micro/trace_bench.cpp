// What a trace costs the thread of the traced task per cycle (trace_recorder.h): the four trace
// slots with nothing attached (every cycle pays this), one sample of 1, 8 and 32 variables, and
// the same with an armed trigger comparing a number each cycle. Figures: docs/performance.md
// "Traces".
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "../native/st_program.h"
#include "takt/engine/trace_recorder.h"

namespace takt::engine {
namespace {

const auto* const kModule = reinterpret_cast<const bytecode::Module*>(0x1000);

// `n` variables spread over a 64 KiB data image as a program lays them out: DINTs, an LREAL
// every sixteenth, a BOOL bit every other eighth.
TraceLayout spread(std::int64_t n) {
    TraceLayout l;
    l.module = kModule;
    l.count = static_cast<std::uint32_t>(n);
    for (std::uint32_t i = 0; i < l.count; ++i) {
        const std::uint32_t offset = (i * 2052) % 65000;
        if (i % 16 == 15) {
            l.ranges[i] = ImageRange{ImageArea::Data, false, 0, offset, 8};
        } else if (i % 8 == 7) {
            l.ranges[i] = ImageRange{ImageArea::Data, true, static_cast<std::uint8_t>(i % 8), offset, 1};
        } else {
            l.ranges[i] = ImageRange{ImageArea::Data, false, 0, offset, 4};
        }
    }
    return l;
}

// No trace: ScanLoop::sampleTraces's test of the four slots.
void BM_TraceNone(benchmark::State& state) {
    std::array<TraceSlot, kMaxTraces> slots;
    std::uint64_t sampled = 0;
    for (auto _ : state) {
        for (TraceSlot& s : slots) {
            s.with(0, [&](TraceRecorder&) { ++sampled; });
        }
        benchmark::DoNotOptimize(sampled);
    }
}
BENCHMARK(BM_TraceNone);

// One trace of `n` variables in a slot, sampled as a cycle's end samples it (the slot's guard
// included); arg 1: with a rising trigger on a DINT that never fires (the comparison each cycle).
void BM_TraceSample(benchmark::State& state) {
    std::vector<std::uint8_t> image(65536, 7);
    TraceTrigger trigger;
    if (state.range(1) != 0) {
        trigger.edge = TraceTrigger::Edge::Rising;
        trigger.number = TraceNumber::Signed;
        trigger.level = 1e12;
    }
    // A ring of 1,000,000 samples (what a long capture holds): the copies go to fresh memory as
    // they do in a trace, not to one cache line.
    const bool armed = state.range(1) != 0;
    const auto make = [&] {
        return std::make_unique<TraceRecorder>(spread(state.range(0)), trigger, armed ? 1'000'000 : 0,
                                               armed ? 1 : 1'000'000);
    };
    std::unique_ptr<TraceRecorder> recorder = make();
    std::array<TraceSlot, kMaxTraces> slots;
    slots[0].attach(recorder.get(), 0);
    const auto imageOf = [&](ImageArea) { return std::span<std::uint8_t>(image.data(), image.size()); };
    std::uint64_t cycle = 0;
    for (auto _ : state) {
        ++image[static_cast<std::size_t>(cycle % 4096) * 16];
        ++cycle;
        for (TraceSlot& s : slots) {
            s.with(0, [&](TraceRecorder& r) { r.sample(kModule, cycle, static_cast<std::int64_t>(cycle), imageOf); });
        }
        if (recorder->state() == TraceState::Done) {
            state.PauseTiming(); // a new capture every million samples, outside the timing
            slots[0].detach();
            recorder = make();
            slots[0].attach(recorder.get(), 0);
            state.ResumeTiming();
        }
    }
    slots[0].detach();
}
BENCHMARK(BM_TraceSample)->Args({1, 0})->Args({8, 0})->Args({32, 0})->Args({32, 1});

// The demo's FastTask program (examples/demo, `Line`, interpreted) one cycle per iteration,
// without a trace (arg 0) and with one of 32 of its variables sampled after every cycle (arg 1),
// side by side in one run: the ratio docs/performance.md reports against the 1.05x target. The
// I/O image stays zero (no plant), so the sequence idles and the cycle is short: a cycle with
// more work makes the sample's share smaller.
void BM_DemoCycle(benchmark::State& state) {
    std::vector<std::string> paths;
    for (const auto& e : std::filesystem::directory_iterator(std::string(TAKT_SOURCE_DIR) + "/examples/demo/src")) {
        if (e.path().extension() == ".st") {
            paths.push_back(e.path().string());
        }
    }
    std::sort(paths.begin(), paths.end());
    bench::StProgram st;
    std::string error;
    if (!st.load(paths, error, Execution::Interpreter, "Line")) {
        state.SkipWithError(error.c_str());
        return;
    }
    LoadedProgram& program = st.program();
    const bytecode::Module& m = program.module();
    TraceLayout layout;
    layout.module = &m;
    for (const bytecode::VarEntry& v : m.variables) {
        const bytecode::ValueKind k = m.types[v.type].kind;
        if (layout.count < kMaxTraceChannels && v.size <= 8 && k != bytecode::ValueKind::Struct &&
            k != bytecode::ValueKind::Array && k != bytecode::ValueKind::FunctionBlock) {
            layout.ranges[layout.count++] = ImageRange{ImageArea::Data, false, 0, v.offset, v.size};
        }
    }
    if (layout.count < kMaxTraceChannels) {
        state.SkipWithError("the demo has fewer than 32 elementary variables");
        return;
    }
    auto recorder = std::make_unique<TraceRecorder>(layout, TraceTrigger{}, 0, 1'000'000);
    std::array<TraceSlot, kMaxTraces> slots;
    if (state.range(0) != 0) {
        slots[0].attach(recorder.get(), 0);
    }
    const auto imageOf = [&](ImageArea) { return std::span<std::uint8_t>(program.image(), program.imageSize()); };
    std::uint64_t cycle = 0;
    for (auto _ : state) {
        if (!st.scan()) {
            state.SkipWithError(st.faultMessage().c_str());
            break;
        }
        ++cycle;
        for (TraceSlot& s : slots) {
            s.with(0, [&](TraceRecorder& r) { r.sample(&m, cycle, static_cast<std::int64_t>(cycle), imageOf); });
        }
        if (recorder->state() == TraceState::Done) {
            state.PauseTiming();
            slots[0].detach();
            recorder = std::make_unique<TraceRecorder>(layout, TraceTrigger{}, 0, 1'000'000);
            slots[0].attach(recorder.get(), 0);
            state.ResumeTiming();
        }
    }
    slots[0].detach();
}
BENCHMARK(BM_DemoCycle)->Arg(0)->Arg(1);

} // namespace
} // namespace takt::engine
