// `takt bench jitter`: the real binary writes a JSON document with both histograms and an SVG.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

using takt::test::readText;

TEST(BenchJitter, WritesJsonWithBothHistogramsAndAnSvg) {
    takt::test::TempDir dir;
    const auto json = dir.path() / "j.json";
    ASSERT_EQ(takt::test::runTakt("bench jitter --period 10ms --duration 300ms --output " + json.string()).exitCode, 0);
    rapidjson::Document doc;
    doc.Parse(readText(json).c_str());
    ASSERT_FALSE(doc.HasParseError());
    EXPECT_EQ(doc["period_ns"].GetInt64(), 10'000'000);
    const std::uint64_t cycles = doc["cycles"].GetUint64();
    EXPECT_GE(cycles, 5u);
    for (const char* key : {"start_lateness", "execution_time"}) {
        const auto& h = doc[key];
        EXPECT_EQ(h["count"].GetUint64(), cycles) << key;
        EXPECT_LE(h["min_ns"].GetInt64(), h["p50_ns"].GetInt64()) << key;
        EXPECT_LE(h["p50_ns"].GetInt64(), h["p99_ns"].GetInt64()) << key;
        EXPECT_LE(h["p99_ns"].GetInt64(), h["p999_ns"].GetInt64()) << key;
        EXPECT_LE(h["p999_ns"].GetInt64(), h["max_ns"].GetInt64()) << key;
        std::uint64_t total = 0;
        for (const auto& b : h["buckets"].GetArray()) {
            EXPECT_LT(b[0].GetInt64(), b[1].GetInt64());
            total += b[2].GetUint64();
        }
        EXPECT_EQ(total, cycles) << key;
    }
    const std::string svg = readText(dir.path() / "j.svg");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("start lateness"), std::string::npos);
    EXPECT_NE(svg.find("execution time"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(BenchJitter, RejectsAMalformedPeriod) {
    EXPECT_EQ(takt::test::runTakt("bench jitter --period fast --duration 1s").exitCode, 10);
}

} // namespace
} // namespace takt::io
