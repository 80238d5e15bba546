// `takt bench jitter --period 1ms --duration 10s [--project DIR] [--output FILE.json]`
// (TARGETS.md "Timing"): runs the scan loop at a fixed period with no field I/O and records
// start lateness (release jitter) and execution time in the loop's histograms, then writes JSON
// (summary + non-empty buckets) and an SVG histogram next to it. Without --project the program
// is a small counter so the figures show the loop itself.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_load.h"
#include "bench_report.h"
#include "commands.h"
#include "run_support.h"
#include "takt/engine/scan_loop.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

struct JitterOptions {
    std::string period = "1ms";
    std::string duration = "10s";
    std::string project;
    std::string output;
    BenchRealtime realtime;
    std::string load; // "" or "agent"
};

int runJitter(const JitterOptions& o) {
    const std::optional<BenchTiming> timing = parseBenchTiming("takt bench jitter", o.period, o.duration, 0);
    if (!timing) {
        return kExitInvalidProject;
    }
    if (!o.load.empty() && o.load != "agent") {
        std::fprintf(stderr, "takt bench jitter: --load: expected \"agent\", got \"%s\"\n", o.load.c_str());
        return kExitInvalidProject;
    }
    RunnableProgram program;
    int exitCode = kExitOk;
    const std::unique_ptr<LiveRuntime> live = loadBenchRuntime(o.project, "takt bench jitter", program, exitCode);
    if (live == nullptr) {
        return exitCode;
    }
    if (!startBenchLoop(*live, benchScanOptions(timing->periodNs, o.realtime), "takt bench jitter")) {
        return kExitInternal;
    }
    engine::ScanLoop& loop = live->loop();
    AgentLoadResult load;
    std::string error;
    if (o.load.empty()) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(timing->durationNs));
    } else if (!runAgentLoad(*live, timing->durationNs, o.project.empty(), load, error)) {
        live->stop();
        std::fprintf(stderr, "takt bench jitter: --load agent: %s\n", error.c_str());
        return kExitInternal;
    }
    live->stop();
    const engine::ScanSnapshot snap = loop.snapshot();

    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("benchmark");
    w.String("jitter");
    w.Key("period_ns");
    w.Int64(timing->periodNs);
    w.Key("duration_ns");
    w.Int64(timing->durationNs);
    w.Key("program");
    w.String(program.origin.c_str());
    writeRealtimeJson(w, o.realtime, loop.warnings());
    w.Key("cycles");
    w.Uint64(snap.cycles);
    w.Key("overruns");
    w.Uint64(snap.overruns);
    w.Key("missed_releases");
    w.Uint64(snap.missedReleases);
    w.Key("start_lateness");
    writeHistogramJson(w, loop.lateness());
    w.Key("execution_time");
    writeHistogramJson(w, loop.execTime());
    if (!o.load.empty()) {
        w.Key("load");
        w.StartObject();
        w.Key("clients");
        w.Int(4);
        w.Key("requests_per_s_per_client");
        w.Int(200);
        w.Key("requests");
        w.Uint64(load.requests);
        w.Key("errors");
        w.Uint64(load.errors);
        for (const auto& [name, p] : {std::pair{"unloaded", load.unloaded}, std::pair{"loaded", load.loaded}}) {
            w.Key(name);
            w.StartObject();
            w.Key("cycles");
            w.Uint64(p.cycles);
            w.Key("lateness_p50_ns");
            w.Int64(p.p50Ns);
            w.Key("lateness_p99_ns");
            w.Int64(p.p99Ns);
            w.Key("lateness_p999_ns");
            w.Int64(p.p999Ns);
            w.Key("lateness_max_ns");
            w.Int64(p.maxNs);
            w.EndObject();
        }
        w.Key("p99_ratio");
        w.Double(load.unloaded.p99Ns > 0
                     ? static_cast<double>(load.loaded.p99Ns) / static_cast<double>(load.unloaded.p99Ns)
                     : 0.0);
        w.EndObject();
    }
    w.EndObject();

    const fs::path json = o.output.empty() ? fs::path(fmt::format("jitter-{}.json", o.period)) : fs::path(o.output);
    fs::path svg = json;
    svg.replace_extension(".svg");
    std::string doc(buf.GetString(), buf.GetSize());
    doc += "\n";
    const std::string svgDoc = histogramSvg(
        fmt::format("takt scan loop, period {}, {} cycles, {} overruns", o.period, snap.cycles, snap.overruns),
        {{&loop.lateness(), "start lateness (release jitter)"}, {&loop.execTime(), "execution time"}});
    if (const std::string e = writeReportFiles(json, doc, svg, svgDoc); !e.empty()) {
        std::fprintf(stderr, "takt bench jitter: %s\n", e.c_str());
        return kExitInternal;
    }
    const engine::HistogramSummary late = loop.lateness().summary();
    const engine::HistogramSummary exec = loop.execTime().summary();
    std::printf("period %s, %llu cycles, %llu overruns\n", o.period.c_str(),
                static_cast<unsigned long long>(snap.cycles), static_cast<unsigned long long>(snap.overruns));
    std::printf("start lateness: p50 %s p99 %s p99.9 %s max %s\n", formatNs(late.p50).c_str(),
                formatNs(late.p99).c_str(), formatNs(late.p999).c_str(), formatNs(late.max).c_str());
    std::printf("execution time: p50 %s p99 %s p99.9 %s max %s\n", formatNs(exec.p50).c_str(),
                formatNs(exec.p99).c_str(), formatNs(exec.p999).c_str(), formatNs(exec.max).c_str());
    if (!o.load.empty()) {
        std::printf("agent load: %llu requests answered, %llu errors%s%s\n",
                    static_cast<unsigned long long>(load.requests), static_cast<unsigned long long>(load.errors),
                    load.firstError.empty() ? "" : "; first: ", load.firstError.c_str());
        for (const auto& [name, p] : {std::pair{"unloaded", load.unloaded}, std::pair{"loaded  ", load.loaded}}) {
            std::printf("start lateness %s: %llu cycles, p50 %s p99 %s p99.9 %s max %s\n", name,
                        static_cast<unsigned long long>(p.cycles), formatNs(p.p50Ns).c_str(), formatNs(p.p99Ns).c_str(),
                        formatNs(p.p999Ns).c_str(), formatNs(p.maxNs).c_str());
        }
        if (load.unloaded.p99Ns > 0) {
            std::printf("p99 loaded / unloaded: %.2f\n",
                        static_cast<double>(load.loaded.p99Ns) / static_cast<double>(load.unloaded.p99Ns));
        }
    }
    std::printf("wrote %s and %s\n", json.c_str(), svg.c_str());
    return kExitOk;
}

} // namespace

void registerBench(CLI::App& app, int& exitCode) {
    CLI::App* bench = app.add_subcommand("bench", "Timing benchmarks (TARGETS.md)");
    bench->require_subcommand(1);
    auto o = std::make_shared<JitterOptions>();
    CLI::App* jitter = bench->add_subcommand("jitter", "Scan-loop start lateness and execution time histograms");
    jitter->add_option("--period", o->period, "Cycle period (1ms, 10ms)");
    jitter->add_option("--duration", o->duration, "How long to run (10s, 30s)");
    jitter->add_option("--project", o->project, "Run this project's program (default: a small counter)");
    jitter->add_option("--output", o->output, "JSON file (default jitter-<period>.json; the SVG goes beside it)");
    addRealtimeOptions(*jitter, o->realtime);
    jitter->add_option("--load", o->load,
                       "agent: serve the control endpoint with 4 clients x 200 requests/s in alternate phases");
    jitter->callback([o, &exitCode] { exitCode = runJitter(*o); });
    registerBenchIoLatency(*bench, exitCode);
}

} // namespace takt::cli
