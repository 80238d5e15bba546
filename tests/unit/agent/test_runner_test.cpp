// `takt test`: the CONFIG.md JSON shape, exit codes, --list/--filter, and the other formats.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "takt/agent/test_runner.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

using CliRun = test::RunResult; // stdout; stderr is not looked at

CliRun takt(const std::string& args) {
    return test::runTakt(args);
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
    EXPECT_EQ(s["failed"].GetUint(), 0u); // only a failed ASSERT_* fails a test
    EXPECT_EQ(s["errors"].GetUint(), 1u); // a runtime fault is an error of the test
    EXPECT_TRUE(s["duration_ms"].IsInt64());
    ASSERT_EQ(d["tests"].Size(), 2u);
    for (const auto& t : d["tests"].GetArray()) {
        for (const char* key : {"name", "kind", "status", "file", "line", "message", "duration_ms"}) {
            EXPECT_TRUE(t.HasMember(key)) << key;
        }
        EXPECT_STREQ(t["kind"].GetString(), "TEST_PROGRAM");
        if (std::string(t["name"].GetString()) == "DividesByZero") {
            EXPECT_STREQ(t["status"].GetString(), "error");
            EXPECT_NE(std::string(t["message"].GetString()).find("zero"), std::string::npos);
            EXPECT_EQ(t["line"].GetUint(), 14u);
        } else {
            EXPECT_STREQ(t["status"].GetString(), "passed");
        }
    }
}

// Every assertion once passing and once failing; the failing ones report the compared values,
// the user's message and the position of the failing call, and stop their test there.
constexpr const char* kAssertions = R"(TEST_PROGRAM AllPass
VAR
  i : INT := 3;
  r : REAL := 1.5;
  s : STRING := 'abc';
  t : TIME := T#1500ms;
  b : BOOL := TRUE;
END_VAR
ASSERT_TRUE(b);
ASSERT_FALSE(NOT b);
ASSERT_EQUAL(3, i);
ASSERT_EQUAL('abc', s);
ASSERT_EQUAL(T#1.5s, t);
ASSERT_NOT_EQUAL(4, i);
ASSERT_GREATER(i, 2);
ASSERT_LESS(i, 4);
ASSERT_GREATER_OR_EQUAL(i, 3);
ASSERT_LESS_OR_EQUAL(i, 3);
ASSERT_NEAR(1.4, r, 0.11);
ASSERT_EQUAL(TRUE, b, 'with a message');
END_TEST_PROGRAM

TEST_PROGRAM EqualInt
VAR i : INT := 3; reached : BOOL; END_VAR
ASSERT_EQUAL(4, i);
reached := TRUE;
ASSERT_TRUE(FALSE);
END_TEST_PROGRAM

TEST_PROGRAM EqualString
VAR s : STRING := 'abd'; END_VAR
ASSERT_EQUAL('abc', s, 'label text');
END_TEST_PROGRAM

TEST_PROGRAM TrueFails
ASSERT_TRUE(1 > 2);
END_TEST_PROGRAM

TEST_PROGRAM NearFails
VAR r : LREAL := 2.5; END_VAR
ASSERT_NEAR(2.0, r, 0.1);
END_TEST_PROGRAM

TEST_PROGRAM GreaterFails
VAR d : DINT := -7; END_VAR
ASSERT_GREATER(d, 0);
END_TEST_PROGRAM

TEST_PROGRAM TimeFails
VAR t : TIME := T#2s; END_VAR
ASSERT_LESS_OR_EQUAL(t, T#1s);
END_TEST_PROGRAM

FUNCTION_BLOCK Latch
VAR_INPUT set : BOOL; END_VAR
VAR_OUTPUT q : BOOL; END_VAR
IF set THEN q := TRUE; END_IF
END_FUNCTION_BLOCK

TEST_FUNCTION_BLOCK LatchHolds
VAR l : Latch; END_VAR
l(set := TRUE);
l(set := FALSE);
ASSERT_TRUE(l.q);
END_TEST_FUNCTION_BLOCK

TEST_FUNCTION_BLOCK LatchFails
VAR l : Latch; END_VAR
l(set := FALSE);
ASSERT_TRUE(l.q, 'never set');
END_TEST_FUNCTION_BLOCK
)";

TEST(TaktTest, AssertionsReportValuesMessagesAndPositions) {
    const fs::path dir = makeProject("takt_test_asserts", kAssertions);
    const CliRun r = takt("test --project " + dir.string() + " --output json");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_EQ(d["summary"]["passed"].GetUint(), 2u) << r.out;
    EXPECT_EQ(d["summary"]["failed"].GetUint(), 7u) << r.out;
    EXPECT_EQ(d["summary"]["errors"].GetUint(), 0u) << r.out;
    std::map<std::string, std::pair<std::string, unsigned>> got;
    std::map<std::string, std::string> kinds;
    for (const auto& t : d["tests"].GetArray()) {
        got[t["name"].GetString()] = {t["message"].GetString(), t["line"].GetUint()};
        kinds[t["name"].GetString()] = t["kind"].GetString();
    }
    const auto expectFailure = [&](const char* name, const std::string& text, unsigned line) {
        ASSERT_EQ(got.count(name), 1u) << name;
        EXPECT_EQ(got[name].first.rfind(text, 0), 0u) << name << ": " << got[name].first;
        EXPECT_EQ(got[name].second, line) << name;
    };
    EXPECT_EQ(got["AllPass"].first, "");
    // The first failing assertion ends the test: line 25, not the ASSERT_TRUE of line 27.
    expectFailure("EqualInt", "ASSERT_EQUAL failed: expected 4, actual 3 (", 25);
    expectFailure("EqualString", "ASSERT_EQUAL failed: expected 'abc', actual 'abd': label text (", 32);
    expectFailure("TrueFails", "ASSERT_TRUE failed (", 36);
    expectFailure("NearFails", "ASSERT_NEAR failed: expected 2, actual 2.5, outside the allowed delta (", 41);
    expectFailure("GreaterFails", "ASSERT_GREATER failed: -7 is not greater than 0 (", 46);
    expectFailure("TimeFails", "ASSERT_LESS_OR_EQUAL failed: T#2000ms is greater than T#1000ms (", 51);
    // TEST_FUNCTION_BLOCKs run once on a fresh instance, like TEST_PROGRAMs.
    EXPECT_EQ(kinds["LatchHolds"], "TEST_FUNCTION_BLOCK");
    EXPECT_EQ(got["LatchHolds"].first, "");
    expectFailure("LatchFails", "ASSERT_TRUE failed: never set (", 70);
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
