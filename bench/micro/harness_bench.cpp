// Harness throughput: cycles per second of a 10-statement program driven by one `cycle`
// request (TARGETS.md: >= 1,000,000 cycles/s). The counter reports items (cycles) per second.
#include <string>

#include <benchmark/benchmark.h>

#include "takt/agent/harness.h"

namespace {

constexpr const char* kProgram =
    R"({"cmd":"load","source":"PROGRAM Main\nVAR\n  a : INT;\n  b : INT := 3;\n  c : DINT;\n  x : BOOL;\n  r : REAL;\nEND_VAR\na := a + 1;\nb := b * 2 MOD 1000;\nc := c + a;\nx := NOT x;\na := SEL(x, a, a - 1);\nr := r + 0.5;\nc := c - b;\nb := b + 1;\na := a MOD 100;\nEND_PROGRAM\n"})";

void harnessCycles(benchmark::State& state) {
    takt::agent::Harness harness(takt::agent::defaultHarnessDeps());
    const std::string loaded = harness.handleLine(kProgram);
    if (loaded.find(R"("ok":true)") == std::string::npos) {
        state.SkipWithError(loaded.c_str());
        return;
    }
    const std::int64_t count = state.range(0);
    const std::string request = R"({"cmd":"cycle","count":)" + std::to_string(count) + R"(,"dt_ms":1})";
    for (auto _ : state) {
        std::string response = harness.handleLine(request);
        benchmark::DoNotOptimize(response);
    }
    state.SetItemsProcessed(state.iterations() * count);
}
BENCHMARK(harnessCycles)->Arg(100000)->Unit(benchmark::kMillisecond);

} // namespace
