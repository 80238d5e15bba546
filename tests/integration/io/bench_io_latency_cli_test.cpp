// `takt bench io-latency`: the real binary over both wirings writes a JSON document with
// plausible samples (every one at least a cycle), the percentiles in order, and an SVG.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

using takt::test::readText;

int runBench(const std::string& args) {
    return takt::test::runTakt("bench io-latency " + args).exitCode;
}

void checkReport(const std::filesystem::path& json, const std::filesystem::path& svg, const char* via,
                 std::int64_t periodNs) {
    rapidjson::Document doc;
    doc.Parse(readText(json).c_str());
    ASSERT_FALSE(doc.HasParseError()) << readText(json);
    EXPECT_EQ(doc["version"].GetInt(), 1);
    EXPECT_STREQ(doc["benchmark"].GetString(), "io-latency");
    EXPECT_STREQ(doc["via"].GetString(), via);
    EXPECT_EQ(doc["period_ns"].GetInt64(), periodNs);
    const std::uint64_t samples = doc["samples"].GetUint64();
    EXPECT_GT(samples, 0U);
    EXPECT_GE(doc["cycles"].GetUint64(), samples); // at least one cycle per sample
    const auto& c = doc["latency_cycles"];
    EXPECT_EQ(c["count"].GetUint64(), samples);
    EXPECT_GE(c["min"].GetDouble(), 1.0); // an output is never read back in the cycle that wrote it
    EXPECT_LE(c["min"].GetDouble(), c["p50"].GetDouble());
    EXPECT_LE(c["p50"].GetDouble(), c["p99"].GetDouble());
    EXPECT_LE(c["p99"].GetDouble(), c["max"].GetDouble());
    const auto& us = doc["latency_us"];
    EXPECT_EQ(us["count"].GetUint64(), samples);
    EXPECT_GT(us["min_us"].GetDouble(), 0.0);
    EXPECT_LE(us["min_us"].GetDouble(), us["p50_us"].GetDouble());
    EXPECT_LE(us["p50_us"].GetDouble(), us["p99_us"].GetDouble());
    EXPECT_LE(us["p99_us"].GetDouble(), us["max_us"].GetDouble());
    const auto& h = doc["histogram"];
    EXPECT_EQ(h["count"].GetUint64(), samples);
    std::uint64_t total = 0;
    for (const auto& b : h["buckets"].GetArray()) {
        total += b[2].GetUint64();
    }
    EXPECT_EQ(total, samples);
    const std::string text = readText(svg);
    EXPECT_EQ(text.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U);
    EXPECT_NE(text.find("output write to input observed"), std::string::npos);
    EXPECT_NE(text.find("</svg>"), std::string::npos);
}

TEST(BenchIoLatency, LoopbackTakesOneCyclePerSample) {
    takt::test::TempDir dir;
    const auto json = dir.path() / "loop.json";
    const auto svg = dir.path() / "loop-plot.svg";
    ASSERT_EQ(runBench("--via loopback --period 2ms --duration 20s --samples 30 --every 2 --out " + json.string() +
                       " --svg " + svg.string()),
              0);
    checkReport(json, svg, "loopback", 2'000'000);
    rapidjson::Document doc;
    doc.Parse(readText(json).c_str());
    EXPECT_EQ(doc["samples"].GetUint64(), 30U); // --samples ends the run
    // The loopback driver hands cycle n's outputs to cycle n+1: exactly one cycle, always.
    EXPECT_EQ(doc["latency_cycles"]["max"].GetDouble(), 1.0);
}

TEST(BenchIoLatency, ModbusRoundTripThroughTheServerDriver) {
    takt::test::TempDir dir;
    const auto json = dir.path() / "modbus.json";
    ASSERT_EQ(runBench("--via modbus --period 5ms --duration 20s --samples 20 --every 2 --out " + json.string()), 0);
    auto svg = json;
    svg.replace_extension(".svg");
    checkReport(json, svg, "modbus", 5'000'000);
}

TEST(BenchIoLatency, RejectsBadOptions) {
    EXPECT_EQ(runBench("--via serial --duration 1s"), 10);
    EXPECT_EQ(runBench("--period fast"), 10);
    EXPECT_EQ(runBench("--every 0 --duration 1s"), 10);
}

} // namespace
} // namespace takt::io
