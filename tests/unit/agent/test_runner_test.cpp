// `takt test`: the CONFIG.md JSON shape, exit codes, --list/--filter, and the other formats.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "takt/agent/test_runner.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

struct CliRun {
    int exitCode = -1;
    std::string out;
};

CliRun takt(const std::string& args) {
    CliRun r;
    const std::string cmd = std::string(TAKT_BINARY) + " " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        r.out.append(buf, n);
    }
    const int status = pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

fs::path makeProject(const std::string& name, const std::string& source) {
    const fs::path dir = fs::path(::testing::TempDir()) / name;
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
    std::ofstream(dir / "src" / "tests.st") << source;
    return dir;
}

constexpr const char* kTests = R"(TEST_PROGRAM AddsUp
VAR
  a : INT := 2;
  b : INT;
END_VAR
b := a + 3;
END_TEST_PROGRAM

TEST_PROGRAM DividesByZero
VAR
  zero : INT;
  r : INT;
END_VAR
r := 10 / zero;
END_TEST_PROGRAM
)";

TEST(TaktTest, JsonShapeStatusesAndExitCode) {
    const fs::path dir = makeProject("takt_test_json", kTests);
    const CliRun r = takt("test --project " + dir.string() + " --output json");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_EQ(d["version"].GetInt(), 1);
    ASSERT_TRUE(d["project"].IsString());
    const auto& s = d["summary"];
    EXPECT_EQ(s["total"].GetUint(), 2u);
    EXPECT_EQ(s["passed"].GetUint(), 1u);
    EXPECT_EQ(s["failed"].GetUint(), 1u);
    EXPECT_EQ(s["errors"].GetUint(), 0u);
    EXPECT_TRUE(s["duration_ms"].IsInt64());
    ASSERT_EQ(d["tests"].Size(), 2u);
    for (const auto& t : d["tests"].GetArray()) {
        for (const char* key : {"name", "kind", "status", "file", "line", "message", "duration_ms"}) {
            EXPECT_TRUE(t.HasMember(key)) << key;
        }
        EXPECT_STREQ(t["kind"].GetString(), "TEST_PROGRAM");
        if (std::string(t["name"].GetString()) == "DividesByZero") {
            EXPECT_STREQ(t["status"].GetString(), "failed");
            EXPECT_NE(std::string(t["message"].GetString()).find("zero"), std::string::npos);
            EXPECT_EQ(t["line"].GetUint(), 14u);
        } else {
            EXPECT_STREQ(t["status"].GetString(), "passed");
        }
    }
}

TEST(TaktTest, FilterAndList) {
    const fs::path dir = makeProject("takt_test_filter", kTests);
    const CliRun passing = takt("test --project " + dir.string() + " --filter adds --output json");
    EXPECT_EQ(passing.exitCode, 0) << passing.out;
    EXPECT_NE(passing.out.find(R"("total":1)"), std::string::npos);
    const CliRun list = takt("test --project " + dir.string() + " --list");
    EXPECT_EQ(list.exitCode, 0);
    EXPECT_NE(list.out.find("AddsUp"), std::string::npos);
    EXPECT_NE(list.out.find("DividesByZero"), std::string::npos);
}

TEST(TaktTest, BuildFailureExitsEleven) {
    const fs::path dir = makeProject("takt_test_broken", "TEST_PROGRAM T\nx := 1;\nEND_TEST_PROGRAM\n");
    EXPECT_EQ(takt("test --project " + dir.string()).exitCode, 11);
}

TestReport sampleReport() {
    TestReport r;
    r.project = "demo";
    r.tests.push_back({"Good", "TEST_PROGRAM", "passed", "src/a.st", 1, "", 0.4});
    r.tests.push_back({"Bad<1>", "TEST_PROGRAM", "failed", "src/a.st", 9, "x & y", 1.2});
    r.passed = 1;
    r.failed = 1;
    r.durationMs = 2;
    return r;
}

TEST(TaktTestFormats, JunitEscapesAndCountsFailures) {
    const std::string x = renderTestJunit(sampleReport());
    EXPECT_NE(x.find(R"(<testsuites tests="2" failures="1" errors="0")"), std::string::npos) << x;
    EXPECT_NE(x.find(R"(name="Bad&lt;1&gt;")"), std::string::npos);
    EXPECT_NE(x.find(R"(<failure message="x &amp; y"/>)"), std::string::npos);
}

TEST(TaktTestFormats, TapPlanAndResults) {
    const std::string t = renderTestTap(sampleReport());
    EXPECT_EQ(t.rfind("TAP version 13\n1..2\nok 1 - Good\nnot ok 2 - Bad<1>\n", 0), 0u) << t;
    EXPECT_NE(t.find("line: 9"), std::string::npos);
}

TEST(TaktTestFormats, HumanSummary) {
    const std::string h = renderTestHuman(sampleReport());
    EXPECT_NE(h.find("FAIL    Bad<1>: x & y"), std::string::npos) << h;
    EXPECT_NE(h.find("2 tests: 1 passed, 1 failed, 0 errors"), std::string::npos);
}

} // namespace
} // namespace takt::agent
