// Options, the scan loop, histogram JSON and SVG for `takt bench jitter` and `takt bench io-latency`.
#include "bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <span>

#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "run_support.h"
#include "takt/bytecode/container.h"
#include "takt/engine/vm_runner.h"

namespace takt::cli {

std::optional<BenchTiming> parseBenchTiming(const char* command, const std::string& period, const std::string& duration,
                                            std::int64_t minDurationNs) {
    const auto periodNs = parseDurationNs(period);
    const auto durationNs = parseDurationNs(duration);
    if (!periodNs || *periodNs <= 0 || !durationNs || *durationNs < minDurationNs) {
        std::fprintf(stderr, "%s: --period and --duration take durations such as 1ms, 10s\n", command);
        return std::nullopt;
    }
    return BenchTiming{*periodNs, *durationNs};
}

void addRealtimeOptions(CLI::App& cmd, BenchRealtime& realtime) {
    cmd.add_flag("--fifo", realtime.fifo, "SCHED_FIFO for the scan thread (degrades with a warning)");
    cmd.add_option("--priority", realtime.priority, "SCHED_FIFO priority");
    cmd.add_option("--cpu", realtime.cpus, "Pin the scan thread to these CPUs");
    cmd.add_flag("--lock-memory", realtime.lockMemory, "mlockall");
}

engine::ScanOptions benchScanOptions(std::int64_t periodNs, const BenchRealtime& realtime) {
    engine::ScanOptions options;
    options.periodNs = periodNs;
    options.watchdog.enabled = false;
    options.realtime.fifo = realtime.fifo;
    options.realtime.priority = realtime.priority;
    options.realtime.cpuAffinity = realtime.cpus;
    options.realtime.lockMemory = realtime.lockMemory;
    return options;
}

bool startBenchLoop(LiveRuntime& live, const engine::ScanOptions& options, const char* command, engine::ProcessIo* io) {
    std::string error;
    if (!live.startScan(options, error, io)) {
        live.stop(); // now, while a caller's `io` still exists
        std::fprintf(stderr, "%s: %s\n", command, error.c_str());
        return false;
    }
    for (const std::string& w : live.loop().warnings()) {
        std::fprintf(stderr, "%s: warning: %s\n", command, w.c_str());
    }
    return true;
}

void writeRealtimeJson(JsonWriter& w, const BenchRealtime& realtime, const std::vector<std::string>& warnings) {
    w.Key("realtime");
    w.StartObject();
    w.Key("fifo");
    w.Bool(realtime.fifo);
    w.Key("priority");
    w.Int(realtime.priority);
    w.Key("lock_memory");
    w.Bool(realtime.lockMemory);
    w.Key("warnings");
    w.StartArray();
    for (const std::string& s : warnings) {
        w.String(s.c_str());
    }
    w.EndArray();
    w.EndObject();
}

void writeHistogramJson(JsonWriter& w, const engine::LatencyHistogram& h) {
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

namespace {

constexpr const char* kCounterProgram = "PROGRAM Main\nVAR\n    n : DINT;\n    acc : LREAL;\nEND_VAR\n"
                                        "n := n + 1;\nacc := acc * 0.5 + DINT_TO_LREAL(n);\nEND_PROGRAM\n";

constexpr double kPanelW = 560;
constexpr double kPanelH = 300;
constexpr double kPanelStride = 630;

// One panel: bars over a log10 time axis, heights log10(count + 1), percentile markers.
std::string svgPanel(const engine::LatencyHistogram& h, const std::string& title, double x0, double y0) {
    constexpr double kW = kPanelW;
    constexpr double kH = kPanelH;
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

bool loadBenchProgram(const std::string& project, RunnableProgram& out, std::string& error, int& exitCode) {
    namespace fs = std::filesystem;
    if (!project.empty()) {
        return loadRunnableProgram(project, out, error, exitCode);
    }
    std::error_code ec;
    const fs::path scratch = fs::temp_directory_path(ec) / fmt::format("takt-bench-{}", getpid());
    fs::create_directories(scratch / "src", ec);
    std::ofstream(scratch / "src" / "main.st") << kCounterProgram;
    const bool loaded = loadRunnableProgram(scratch, out, error, exitCode);
    fs::remove_all(scratch, ec);
    return loaded;
}

} // namespace

std::unique_ptr<LiveRuntime> loadBenchRuntime(const std::string& project, const char* command, RunnableProgram& program,
                                              int& exitCode) {
    std::string error;
    exitCode = kExitOk;
    if (!loadBenchProgram(project, program, error, exitCode)) {
        std::fputs(error.c_str(), stderr);
        return nullptr;
    }
    std::unique_ptr<LiveRuntime> live = LiveRuntime::load(program.module, program.hash, error);
    if (live == nullptr) {
        std::fprintf(stderr, "%s: %s\n", command, error.c_str());
        exitCode = kExitInternal;
    }
    return live;
}

std::string histogramSvg(const std::string& title, const std::vector<SvgPanel>& panels) {
    const double width = kPanelStride * double(std::max<std::size_t>(1, panels.size())) + 20;
    std::string svg = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="420" font-family="sans-serif">)", width);
    svg += fmt::format(R"(<text x="{}" y="22" font-size="17" text-anchor="middle">{}</text>)", width / 2, title);
    for (std::size_t i = 0; i < panels.size(); ++i) {
        svg += svgPanel(*panels[i].histogram, panels[i].title, 50 + kPanelStride * double(i), 60);
    }
    return svg + "</svg>\n";
}

std::string writeReportFiles(const std::filesystem::path& json, const std::string& jsonText,
                             const std::filesystem::path& svg, const std::string& svgText) {
    const auto bytes = [](const std::string& s) {
        return std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    };
    std::string error = bytecode::writeFileAtomically(json, bytes(jsonText));
    if (error.empty()) {
        error = bytecode::writeFileAtomically(svg, bytes(svgText));
    }
    return error;
}

} // namespace takt::cli
