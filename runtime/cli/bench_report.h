#pragma once
// What the `takt bench` subcommands share: a latency histogram as JSON (summary + non-empty
// buckets), the same histograms as SVG panels on a log time axis, and writing the JSON and SVG
// files. `takt bench io-latency` registers itself through registerBenchIoLatency.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "run_support.h"
#include "takt/engine/engine.h"
#include "takt/engine/histogram.h"

namespace takt::cli {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

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
// loaded into an Engine (VM runner) on `clock`. Null after writing the error to stderr under
// `command` ("takt bench jitter"), with `exitCode` set.
[[nodiscard]] std::unique_ptr<engine::Engine> loadBenchEngine(const std::string& project, const char* command,
                                                              engine::Clock& clock, RunnableProgram& program,
                                                              int& exitCode);

// `takt bench io-latency` under `bench` (cmd_bench_io_latency.cpp).
void registerBenchIoLatency(CLI::App& bench, int& exitCode);

} // namespace takt::cli
