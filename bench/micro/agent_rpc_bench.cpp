// Round trip of harness.cycle through `takt agent serve` over stdio pipes: one request line
// written, one response line read, a small program (a counter and a TON) loaded once.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <benchmark/benchmark.h>

#include "../../tests/support/agent_process.h"

namespace {

namespace fs = std::filesystem;

// The takt binary next to the benchmark's build directory (build/bench/takt_bench -> build/takt).
std::string taktBinary() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return (self.parent_path().parent_path() / "takt").string();
}

void agentHarnessCycleRoundTrip(benchmark::State& state) {
    std::string pattern = (fs::temp_directory_path() / "takt-agent-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        state.SkipWithError("no scratch directory");
        return;
    }
    const fs::path root = pattern;
    fs::create_directories(root / "src");
    std::ofstream(root / "src/main.st") << "PROGRAM Main\nVAR\n  start : BOOL := TRUE;\n  t : TON;\n  q : BOOL;\n"
                                           "  n : DINT;\nEND_VAR\nn := n + 1;\nt(IN := start, PT := T#100ms);\n"
                                           "q := t.Q;\nEND_PROGRAM\n";
    {
        takt::test::AgentProcess agent(taktBinary(), root.string());
        std::string line;
        if (!agent.running() || !agent.readLine(line) ||
            agent.call(R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"project":"."}})").find("result") ==
                std::string::npos) {
            state.SkipWithError("takt agent serve did not start or load");
        } else {
            const std::string request =
                R"({"jsonrpc":"2.0","id":2,"method":"harness.cycle","params":{"count":1,"dt_ms":10,"watch":["q","n"]}})";
            for (auto _ : state) {
                const std::string response = agent.call(request);
                benchmark::DoNotOptimize(response.data());
                if (response.empty()) {
                    state.SkipWithError("no response");
                    break;
                }
            }
        }
        agent.finish();
    }
    fs::remove_all(root);
}
BENCHMARK(agentHarnessCycleRoundTrip)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly(true);

} // namespace
