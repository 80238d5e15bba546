// `takt bench jitter --period 1ms --duration 10s [--project DIR] [--output FILE.json]`
// (TARGETS.md "Timing"): runs the scan loop at a fixed period with no field I/O and records
// start lateness (release jitter) and execution time in the loop's histograms, then writes JSON
// (summary + non-empty buckets) and an SVG histogram next to it. Without --project the program
// is a small counter so the figures show the loop itself.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include "bench_load.h"
#include "commands.h"
#include "run_support.h"
#include "takt/bytecode/container.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

struct JitterOptions {
    std::string period = "1ms";
    std::string duration = "10s";
    std::string project;
    std::string output;
    bool fifo = false;
    int priority = 80;
    std::vector<int> cpus;
    bool lockMemory = false;
    std::string load; // "" or "agent"
};

// No field I/O: the benchmark measures the loop and the program.
class NullIo final : public engine::ProcessIo {
public:
    std::size_t inputBytes() const noexcept override { return 0; }
    std::size_t outputBytes() const noexcept override { return 0; }
    std::size_t memoryBytes() const noexcept override { return 0; }
    void readInputs(const engine::ProcessImageView& /*image*/) noexcept override {}
    void writeOutputs(const engine::ProcessImageView& /*image*/) noexcept override {}
    void applySafeState() noexcept override {}
    void releaseSafeState() noexcept override {}
    engine::IoHealthSummary healthSummary() const noexcept override { return {}; }
};

constexpr const char* kCounterProgram = "PROGRAM Main\nVAR\n    n : DINT;\n    acc : LREAL;\nEND_VAR\n"
                                        "n := n + 1;\nacc := acc * 0.5 + DINT_TO_LREAL(n);\nEND_PROGRAM\n";

void writeSummary(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w, const engine::LatencyHistogram& h) {
    const engine::HistogramSummary s = h.summary();
    w.StartObject();
    w.Key("count");
    w.Uint64(s.count);
    w.Key("min_ns");
    w.Int64(s.min);
    w.Key("p50_ns");
    w.Int64(s.p50);
    w.Key("p99_ns");
    w.Int64(s.p99);
    w.Key("p999_ns");
    w.Int64(s.p999);
    w.Key("max_ns");
    w.Int64(s.max);
    w.Key("mean_ns");
    w.Int64(s.mean);
    w.Key("buckets");
    w.StartArray();
    for (const engine::HistogramBucket& b : h.buckets()) {
        w.StartArray();
        w.Int64(b.low);
        w.Int64(b.high);
        w.Uint64(b.count);
        w.EndArray();
    }
    w.EndArray();
    w.EndObject();
}

// One panel: bars over a log10 time axis, heights log10(count + 1), percentile markers.
std::string svgPanel(const engine::LatencyHistogram& h, const std::string& title, double x0, double y0) {
    constexpr double kW = 560;
    constexpr double kH = 300;
    const std::vector<engine::HistogramBucket> buckets = h.buckets();
    const engine::HistogramSummary s = h.summary();
    std::string out = fmt::format("<g transform=\"translate({},{})\">", x0, y0);
    out += fmt::format(R"(<text x="{}" y="-12" font-size="15" text-anchor="middle">{}</text>)", kW / 2, title);
    out += fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="none" stroke="#444"/>)", kW, kH);
    if (buckets.empty()) {
        return out + "</g>";
    }
    const double lo = std::floor(std::log10(std::max<double>(1.0, double(buckets.front().low))));
    const double hi = std::ceil(std::log10(double(buckets.back().high)));
    const double span = std::max(1.0, hi - lo);
    std::uint64_t peak = 1;
    for (const auto& b : buckets) {
        peak = std::max(peak, b.count);
    }
    const double top = std::log10(double(peak) + 1);
    const auto xOf = [&](double ns) { return (std::log10(std::max(1.0, ns)) - lo) / span * kW; };
    for (const auto& b : buckets) {
        const double x = xOf(double(b.low));
        const double w = std::max(1.0, xOf(double(b.high)) - x);
        const double bh = std::log10(double(b.count) + 1) / top * (kH - 10);
        out += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#3a7bd5"/>)", x, kH - bh,
                           w, bh);
    }
    for (double d = lo; d <= hi; d += 1) {
        const double x = (d - lo) / span * kW;
        out += fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#444"/>)", x, kH, kH + 5);
        out += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle">{}</text>)", x, kH + 18,
                           formatNs(static_cast<std::int64_t>(std::pow(10.0, d))));
    }
    const std::pair<const char*, std::int64_t> marks[] = {
        {"p50", s.p50}, {"p99", s.p99}, {"p99.9", s.p999}, {"max", s.max}};
    int row = 0;
    for (const auto& [name, v] : marks) {
        const double x = xOf(double(v));
        out += fmt::format(
            R"(<line x1="{0:.1f}" y1="0" x2="{0:.1f}" y2="{1}" stroke="#d5533a" stroke-dasharray="4,3"/>)", x, kH);
        out += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" fill="#d5533a">{} {}</text>)", x + 3,
                           14 + 13 * row++, name, formatNs(v));
    }
    out += fmt::format(
        R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">time (log scale); bar height: log10(count+1); n = {}</text>)",
        kW / 2, kH + 34, s.count);
    return out + "</g>";
}

int runJitter(const JitterOptions& o) {
    const auto period = parseDurationNs(o.period);
    const auto duration = parseDurationNs(o.duration);
    if (!period || *period <= 0 || !duration) {
        std::fprintf(stderr, "takt bench jitter: --period and --duration take durations such as 1ms, 10s\n");
        return kExitInvalidProject;
    }
    if (!o.load.empty() && o.load != "agent") {
        std::fprintf(stderr, "takt bench jitter: --load: expected \"agent\", got \"%s\"\n", o.load.c_str());
        return kExitInvalidProject;
    }
    fs::path projectDir = o.project;
    fs::path scratch;
    std::error_code ec;
    if (projectDir.empty()) {
        scratch = fs::temp_directory_path(ec) / fmt::format("takt-bench-{}", getpid());
        fs::create_directories(scratch / "src", ec);
        std::ofstream(scratch / "src" / "main.st") << kCounterProgram;
        projectDir = scratch;
    }
    RunnableProgram program;
    std::string error;
    int exitCode = kExitOk;
    const bool loaded = loadRunnableProgram(projectDir, program, error, exitCode);
    if (!scratch.empty()) {
        fs::remove_all(scratch, ec);
    }
    if (!loaded) {
        std::fputs(error.c_str(), stderr);
        return exitCode;
    }
    engine::CycleClock clock;
    engine::Engine engine(std::make_unique<engine::VmRunner>(0), clock);
    engine::FaultReport fault;
    if (!engine.load(std::make_unique<engine::LoadedProgram>(program.module, program.hash), fault)) {
        std::fprintf(stderr, "takt bench jitter: init fault: %s\n", fault.message.c_str());
        return kExitInternal;
    }
    NullIo io;
    engine::ScanOptions options;
    options.periodNs = *period;
    options.watchdog.enabled = false;
    options.realtime.fifo = o.fifo;
    options.realtime.priority = o.priority;
    options.realtime.cpuAffinity = o.cpus;
    options.realtime.lockMemory = o.lockMemory;
    engine::ScanLoop loop(engine, clock, io, options);
    if (!loop.start(error)) {
        std::fprintf(stderr, "takt bench jitter: %s\n", error.c_str());
        return kExitInternal;
    }
    for (const std::string& w : loop.warnings()) {
        std::fprintf(stderr, "takt bench jitter: warning: %s\n", w.c_str());
    }
    AgentLoadResult load;
    if (o.load.empty()) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(*duration));
    } else if (!runAgentLoad(loop, engine, *duration, o.project.empty(), load, error)) {
        loop.stop();
        std::fprintf(stderr, "takt bench jitter: --load agent: %s\n", error.c_str());
        return kExitInternal;
    }
    loop.stop();
    const engine::ScanSnapshot snap = loop.snapshot();

    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("benchmark");
    w.String("jitter");
    w.Key("period_ns");
    w.Int64(*period);
    w.Key("duration_ns");
    w.Int64(*duration);
    w.Key("program");
    w.String(program.origin.c_str());
    w.Key("realtime");
    w.StartObject();
    w.Key("fifo");
    w.Bool(o.fifo);
    w.Key("priority");
    w.Int(o.priority);
    w.Key("lock_memory");
    w.Bool(o.lockMemory);
    w.Key("warnings");
    w.StartArray();
    for (const std::string& s : loop.warnings()) {
        w.String(s.c_str());
    }
    w.EndArray();
    w.EndObject();
    w.Key("cycles");
    w.Uint64(snap.cycles);
    w.Key("overruns");
    w.Uint64(snap.overruns);
    w.Key("missed_releases");
    w.Uint64(snap.missedReleases);
    w.Key("start_lateness");
    writeSummary(w, loop.lateness());
    w.Key("execution_time");
    writeSummary(w, loop.execTime());
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
    std::string svgDoc =
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="1280" height="420" font-family="sans-serif">)";
    svgDoc += fmt::format(
        R"(<text x="640" y="22" font-size="17" text-anchor="middle">takt scan loop, period {}, {} cycles, {} overruns</text>)",
        o.period, snap.cycles, snap.overruns);
    svgDoc += svgPanel(loop.lateness(), "start lateness (release jitter)", 50, 60);
    svgDoc += svgPanel(loop.execTime(), "execution time", 680, 60);
    svgDoc += "</svg>\n";
    const std::string e1 =
        bytecode::writeFileAtomically(json, std::span(reinterpret_cast<const std::uint8_t*>(doc.data()), doc.size()));
    const std::string e2 = bytecode::writeFileAtomically(
        svg, std::span(reinterpret_cast<const std::uint8_t*>(svgDoc.data()), svgDoc.size()));
    if (!e1.empty() || !e2.empty()) {
        std::fprintf(stderr, "takt bench jitter: %s%s\n", e1.c_str(), e2.c_str());
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
    jitter->add_flag("--fifo", o->fifo, "SCHED_FIFO for the scan thread (degrades with a warning)");
    jitter->add_option("--priority", o->priority, "SCHED_FIFO priority");
    jitter->add_option("--cpu", o->cpus, "Pin the scan thread to these CPUs");
    jitter->add_flag("--lock-memory", o->lockMemory, "mlockall");
    jitter->add_option("--load", o->load,
                       "agent: serve the control endpoint with 4 clients x 200 requests/s in alternate phases");
    jitter->callback([o, &exitCode] { exitCode = runJitter(*o); });
}

} // namespace takt::cli
