#pragma once
// What the `takt bench` subcommands share: the --period/--duration check, the scan-thread
// realtime options and their JSON block, starting the scan loop, a latency histogram as JSON
// (summary + non-empty buckets), the same histograms as SVG panels on a log time axis, and
// writing the JSON and SVG files. `takt bench io-latency` registers itself through
// registerBenchIoLatency.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "live_runtime.h"
#include "run_support.h"
#include "takt/engine/engine.h"
#include "takt/engine/histogram.h"
#include "takt/engine/scan_loop.h"

namespace takt::cli {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

struct BenchTiming {
    std::int64_t periodNs = 0;
    std::int64_t durationNs = 0;
};

// --period (> 0) and --duration (>= minDurationNs) as nanoseconds; nullopt after writing the
// error to stderr under `command` ("takt bench jitter").
[[nodiscard]] std::optional<BenchTiming> parseBenchTiming(const char* command, const std::string& period,
                                                          const std::string& duration, std::int64_t minDurationNs);

// The scan thread's realtime options, the same for every subcommand.
struct BenchRealtime {
    bool fifo = false;
    int priority = 80;
    std::vector<int> cpus;
    bool lockMemory = false;
};

// --fifo, --priority, --cpu and --lock-memory on `cmd`.
void addRealtimeOptions(CLI::App& cmd, BenchRealtime& realtime);

// A benchmark's scan options: `periodNs`, no watchdog, `realtime`.
[[nodiscard]] engine::ScanOptions benchScanOptions(std::int64_t periodNs, const BenchRealtime& realtime);

// "realtime": {"fifo","priority","lock_memory","warnings":[…]} with the loop's warnings.
void writeRealtimeJson(JsonWriter& w, const BenchRealtime& realtime, const std::vector<std::string>& warnings);

// {"count","min_ns","p50_ns","p99_ns","p999_ns","max_ns","mean_ns","buckets":[[low,high,count]…]}
void writeHistogramJson(JsonWriter& w, const engine::LatencyHistogram& h);

struct SvgPanel {
    const engine::LatencyHistogram* histogram = nullptr;
    std::string title;
};

// One SVG document: `title` over the panels side by side (bars over a log10 time axis, heights
// log10(count + 1), p50/p99/p99.9/max markers).
[[nodiscard]] std::string histogramSvg(const std::string& title, const std::vector<SvgPanel>& panels);

// Writes both files atomically; "" or the error.
[[nodiscard]] std::string writeReportFiles(const std::filesystem::path& json, const std::string& jsonText,
                                           const std::filesystem::path& svg, const std::string& svgText);

// The program of `project`, or without one a small counter (so the figures show the loop),
// loaded into the live runtime `takt run` uses. Null after writing the error to stderr under
// `command` ("takt bench jitter"), with `exitCode` set.
[[nodiscard]] std::unique_ptr<LiveRuntime> loadBenchRuntime(const std::string& project, const char* command,
                                                            RunnableProgram& program, int& exitCode);

// Starts the scan loop of `live` on `io` (the drivers, or no field I/O, when null); false after
// writing the error to stderr under `command`, else its warnings (a realtime setting that
// degraded) go there.
[[nodiscard]] bool startBenchLoop(LiveRuntime& live, const engine::ScanOptions& options, const char* command,
                                  engine::ProcessIo* io = nullptr);

// `takt bench io-latency` under `bench` (cmd_bench_io_latency.cpp).
void registerBenchIoLatency(CLI::App& bench, int& exitCode);

} // namespace takt::cli
