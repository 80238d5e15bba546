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

// ASSERT_EQUAL / ASSERT_NOT_EQUAL on STRUCT and ARRAY values compare by value, member by member
// (REAL with =, STRING up to the terminator), and a failure names where the values first differ.
constexpr const char* kAggregates = R"(TYPE Point : STRUCT x : REAL; y : REAL; END_STRUCT; END_TYPE
TYPE Sample : STRUCT id : INT; val : LREAL; END_STRUCT; END_TYPE
TYPE Mode : (Idle, Running, Stopped); END_TYPE
TYPE Axis : STRUCT
  name : STRING[10];
  pos : Point;
  hist : ARRAY[1..3] OF DINT;
  mode : Mode;
  flag : BOOL;
END_STRUCT; END_TYPE

TEST_PROGRAM NestedPass
VAR a, b : Axis; END_VAR
a.name := 'abcdefgh';
a.name := 'ab';
b.name := 'ab';
a.pos.x := 1.5; b.pos.x := 1.5;
a.hist[2] := 7; b.hist[2] := 7;
a.mode := Running; b.mode := Running;
ASSERT_EQUAL(a, b);
b.hist[3] := 1;
ASSERT_NOT_EQUAL(a, b);
END_TEST_PROGRAM

TEST_PROGRAM NestedMemberDiffers
VAR a, b : Axis; END_VAR
a.pos.x := 1.0; b.pos.x := 1.0;
a.pos.y := 2.0; b.pos.y := 2.25;
a.hist[3] := 9;
ASSERT_EQUAL(a, b, 'axis');
END_TEST_PROGRAM

TEST_PROGRAM StringMemberDiffers
VAR a, b : Axis; END_VAR
a.name := 'abc'; b.name := 'abd';
ASSERT_EQUAL(a, b);
END_TEST_PROGRAM

TEST_PROGRAM EnumMemberDiffers
VAR a, b : Axis; END_VAR
a.mode := Running; b.mode := Stopped;
ASSERT_EQUAL(a, b);
END_TEST_PROGRAM

TEST_PROGRAM ArrayOfStructs
VAR e, f : ARRAY[1..1000] OF Sample; i : INT; END_VAR
FOR i := 1 TO 1000 DO
  e[i].id := i; f[i].id := i;
  e[i].val := INT_TO_LREAL(i) * 0.5; f[i].val := INT_TO_LREAL(i) * 0.5;
END_FOR
ASSERT_EQUAL(e, f);
f[3].val := 2.0;
f[700].id := 0;
ASSERT_EQUAL(e, f);
END_TEST_PROGRAM

TEST_PROGRAM SignedZerosAreEqual
VAR p, q : Point; END_VAR
p.x := 0.0; q.x := -0.0;
ASSERT_EQUAL(p, q);
END_TEST_PROGRAM

TEST_PROGRAM NanIsNotEqual
VAR p, q : Point; END_VAR
p.y := SQRT(-1.0); q.y := p.y;
ASSERT_NOT_EQUAL(p, q);
ASSERT_EQUAL(p, q);
END_TEST_PROGRAM

TEST_PROGRAM NotEqualFails
VAR p, q : Point; END_VAR
p.x := 1.5; q.x := 1.5; p.y := -3.0; q.y := -3.0;
ASSERT_NOT_EQUAL(p, q, 'must move');
END_TEST_PROGRAM

TEST_PROGRAM TwoDimensions
VAR m, n : ARRAY[0..1, 1..3] OF INT; END_VAR
n[1, 2] := 5;
ASSERT_EQUAL(m, n);
END_TEST_PROGRAM

TEST_PROGRAM ArrayOfArrays
VAR m, n : ARRAY[1..2] OF ARRAY[1..2] OF WSTRING[4]; END_VAR
m[2][1] := "ab"; n[2][1] := "ac";
ASSERT_EQUAL(m, n);
END_TEST_PROGRAM
)";

TEST(TaktTest, AggregateEqualityReportsTheFirstDifference) {
    const fs::path dir = makeProject("takt_test_aggregates", kAggregates);
    const CliRun r = takt("test --project " + dir.string() + " --output json");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    std::map<std::string, std::pair<std::string, std::string>> got; // name -> status, message
    std::map<std::string, unsigned> lines;
    for (const auto& t : d["tests"].GetArray()) {
        got[t["name"].GetString()] = {t["status"].GetString(), t["message"].GetString()};
        lines[t["name"].GetString()] = t["line"].GetUint();
    }
    EXPECT_EQ(got["NestedPass"], std::make_pair(std::string("passed"), std::string())) << r.out;
    EXPECT_EQ(got["SignedZerosAreEqual"].first, "passed") << got["SignedZerosAreEqual"].second;
    const auto expectFailure = [&](const char* name, const std::string& text, unsigned line) {
        ASSERT_EQ(got.count(name), 1u) << name;
        EXPECT_EQ(got[name].first, "failed") << name;
        EXPECT_EQ(got[name].second.rfind(text + " (", 0), 0u) << name << ": " << got[name].second;
        EXPECT_EQ(lines[name], line) << name;
    };
    // Declaration order: pos.y comes before hist[3], which also differs.
    expectFailure("NestedMemberDiffers", "ASSERT_EQUAL failed: expected.pos.y = 2, actual.pos.y = 2.25: axis", 30);
    expectFailure("StringMemberDiffers", "ASSERT_EQUAL failed: expected.name = 'abc', actual.name = 'abd'", 36);
    expectFailure("EnumMemberDiffers", "ASSERT_EQUAL failed: expected.mode = Mode#Running, actual.mode = Mode#Stopped",
                  42);
    expectFailure("ArrayOfStructs", "ASSERT_EQUAL failed: expected[3].val = 1.5, actual[3].val = 2", 54);
    // NaN <> NaN, as for the scalar ASSERT_EQUAL: the ASSERT_NOT_EQUAL passes, the ASSERT_EQUAL fails.
    ASSERT_EQ(got.count("NanIsNotEqual"), 1u);
    EXPECT_EQ(got["NanIsNotEqual"].first, "failed");
    EXPECT_NE(got["NanIsNotEqual"].second.find("ASSERT_EQUAL failed: expected.y = "), std::string::npos)
        << got["NanIsNotEqual"].second;
    EXPECT_EQ(lines["NanIsNotEqual"], 67u);
    expectFailure("NotEqualFails", "ASSERT_NOT_EQUAL failed: both are (x := 1.5, y := -3): must move", 73);
    expectFailure("TwoDimensions", "ASSERT_EQUAL failed: expected[1, 2] = 0, actual[1, 2] = 5", 79);
    expectFailure("ArrayOfArrays", R"(ASSERT_EQUAL failed: expected[2][1] = "ab", actual[2][1] = "ac")", 85);
}

// The failing assertions (ASSERT_FAIL records where the values are) and run-time errors report
// the same on the native tier: every test's status, message and line (ctest -L native).
TEST(TaktTest, NativeTierSameReportsAsTheInterpreter) {
    const auto results = [](const fs::path& dir, const char* execution) {
        const CliRun r = takt("test --project " + dir.string() + " --output json --execution " + execution);
        rapidjson::Document d;
        d.Parse(r.out.c_str());
        std::map<std::string, std::string> got;
        EXPECT_FALSE(d.HasParseError()) << r.out;
        if (!d.HasParseError()) {
            for (const auto& t : d["tests"].GetArray()) {
                got[t["name"].GetString()] = std::string(t["status"].GetString()) + " " + t["message"].GetString() +
                                             " @" + std::to_string(t["line"].GetUint());
            }
        }
        got["exit"] = std::to_string(r.exitCode);
        return got;
    };
    for (const auto& [name, source] :
         {std::pair{"takt_test_native_asserts", kAssertions}, std::pair{"takt_test_native_aggregates", kAggregates},
          std::pair{"takt_test_native_errors", kTests}}) {
        const fs::path dir = makeProject(name, source);
        const auto interpreted = results(dir, "interpreter");
        EXPECT_GT(interpreted.size(), 2u) << name;
        EXPECT_EQ(results(dir, "native"), interpreted) << name;
    }
}

// The same failure in the other formats: the location is part of the message text.
TEST(TaktTest, AggregateFailureInHumanAndJunitOutput) {
    const fs::path dir = makeProject("takt_test_aggregates_formats", kAggregates);
    const CliRun human = takt("test --project " + dir.string() + " --filter ArrayOfStructs");
    EXPECT_EQ(human.exitCode, 12) << human.out;
    EXPECT_NE(human.out.find("FAIL    ArrayOfStructs: ASSERT_EQUAL failed: expected[3].val = 1.5, actual[3].val = 2"),
              std::string::npos)
        << human.out;
    const CliRun junit = takt("test --project " + dir.string() + " --filter ArrayOfStructs --output junit");
    EXPECT_NE(junit.out.find(R"(<failure message="ASSERT_EQUAL failed: expected[3].val = 1.5, actual[3].val = 2)"),
              std::string::npos)
        << junit.out;
}

// A scalar enumeration in a failed assertion is printed as ST writes it (Mode#Auto, not 1), in
// every output format.
constexpr const char* kEnums = R"(TYPE Mode : (Off, Manual, Auto); END_TYPE
TYPE Level : (Low := 10, High := 20) INT; END_TYPE

TEST_PROGRAM EnumEqual
VAR m : Mode := Mode#Manual; END_VAR
ASSERT_EQUAL(Mode#Auto, m);
END_TEST_PROGRAM

TEST_PROGRAM EnumNotEqual
VAR m : Mode := Mode#Auto; END_VAR
ASSERT_NOT_EQUAL(Mode#Auto, m, 'still auto');
END_TEST_PROGRAM

TEST_PROGRAM EnumWithValues
VAR l : Level := Level#Low; END_VAR
ASSERT_EQUAL(Level#High, l);
END_TEST_PROGRAM
)";

TEST(TaktTest, EnumerationValuesPrintedByName) {
    const fs::path dir = makeProject("takt_test_enums", kEnums);
    const CliRun r = takt("test --project " + dir.string() + " --output json");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    std::map<std::string, std::string> got;
    for (const auto& t : d["tests"].GetArray()) {
        got[t["name"].GetString()] = t["message"].GetString();
    }
    EXPECT_EQ(got["EnumEqual"].rfind("ASSERT_EQUAL failed: expected Mode#Auto, actual Mode#Manual (", 0), 0u)
        << got["EnumEqual"];
    EXPECT_EQ(got["EnumNotEqual"].rfind("ASSERT_NOT_EQUAL failed: both are Mode#Auto: still auto (", 0), 0u)
        << got["EnumNotEqual"];
    EXPECT_EQ(got["EnumWithValues"].rfind("ASSERT_EQUAL failed: expected Level#High, actual Level#Low (", 0), 0u)
        << got["EnumWithValues"];
    const std::string expected = "ASSERT_EQUAL failed: expected Mode#Auto, actual Mode#Manual";
    for (const char* format : {"human", "junit", "tap"}) {
        const CliRun o = takt("test --project " + dir.string() + " --filter EnumEqual --output " + format);
        EXPECT_NE(o.out.find(expected), std::string::npos) << format << ": " << o.out;
    }
    // Both tiers print the same.
    const CliRun native = takt("test --project " + dir.string() + " --output json --execution native");
    EXPECT_NE(native.out.find("expected Mode#Auto, actual Mode#Manual"), std::string::npos) << native.out;
}

// A test that calls TEST_FINISHED() runs cycle after cycle, virtual time advancing by the cycle
// time (10 ms unless --cycle-time says otherwise) between cycles, so timers elapse in a test.
constexpr const char* kCycles = R"(TEST_PROGRAM TonElapses
VAR t : TON; cycles : INT; END_VAR
t(IN := TRUE, PT := T#100ms);
cycles := cycles + 1;
IF NOT t.Q THEN
  ASSERT_LESS(cycles, 1000, 'the TON never elapses');
ELSE
  ASSERT_EQUAL(T#100ms, t.ET);
  ASSERT_EQUAL(T#100ms, TIME());
  ASSERT_EQUAL(11, cycles);
  TEST_FINISHED();
END_IF;
END_TEST_PROGRAM

TEST_FUNCTION_BLOCK Sequence
VAR step : INT; pulse : TP; timeout : TON; END_VAR
CASE step OF
0: pulse(IN := TRUE, PT := T#30ms); step := 1;
1: pulse(IN := TRUE, PT := T#30ms);
   IF NOT pulse.Q THEN step := 2; END_IF;
2: timeout(IN := TRUE, PT := T#1s);
   ASSERT_FALSE(timeout.Q, 'waited too long');
END_CASE;
IF step = 2 AND pulse.ET = T#30ms THEN
  TEST_FINISHED();
END_IF;
END_TEST_FUNCTION_BLOCK

TEST_PROGRAM FailsInALaterCycle
VAR n : INT; END_VAR
n := n + 1;
ASSERT_LESS(n, 5);
IF n > 100 THEN TEST_FINISHED(); END_IF;
END_TEST_PROGRAM

TEST_PROGRAM NeverFinishes
VAR n : INT; END_VAR
n := n + 1;
IF n < 0 THEN TEST_FINISHED(); END_IF;
END_TEST_PROGRAM
)";

TEST(TaktTest, TestFinishedRunsCyclesOnVirtualTime) {
    const fs::path dir = makeProject("takt_test_cycles", kCycles);
    for (const char* execution : {"interpreter", "native"}) {
        const CliRun r = takt("test --project " + dir.string() + " --output json --max-cycles 500 --execution " +
                              std::string(execution));
        ASSERT_EQ(r.exitCode, 12) << r.out;
        rapidjson::Document d;
        d.Parse(r.out.c_str());
        ASSERT_FALSE(d.HasParseError()) << r.out;
        std::map<std::string, std::pair<std::string, std::string>> got;
        for (const auto& t : d["tests"].GetArray()) {
            got[t["name"].GetString()] = {t["status"].GetString(), t["message"].GetString()};
        }
        EXPECT_EQ(got["TonElapses"].first, "passed") << got["TonElapses"].second;
        EXPECT_EQ(got["Sequence"].first, "passed") << got["Sequence"].second;
        EXPECT_EQ(got["FailsInALaterCycle"].first, "failed");
        EXPECT_EQ(got["FailsInALaterCycle"].second.rfind("ASSERT_LESS failed: 5 is not less than 5 (", 0), 0u)
            << got["FailsInALaterCycle"].second;
        EXPECT_EQ(got["NeverFinishes"].first, "error");
        EXPECT_EQ(got["NeverFinishes"].second, "TEST_FINISHED() not reached in 500 cycles (virtual time T#4990ms)");
    }
    // A shorter cycle time: the TON takes 101 cycles of 1 ms.
    const CliRun fine = takt("test --project " + dir.string() + " --filter TonElapses --cycle-time 1");
    EXPECT_EQ(fine.exitCode, 12) << fine.out;
    EXPECT_NE(fine.out.find("ASSERT_EQUAL failed: expected 11, actual 101"), std::string::npos) << fine.out;
}

// A test that never finishes at the longest cycle time and the most cycles allowed: its virtual
// clock stops before it would overflow (about 87,000 cycles of a day), an error of the test. The
// clock overflowed before, which the sanitizer build stops at.
TEST(TaktTest, VirtualTimeEndsBeforeItOverflows) {
    const fs::path dir = makeProject("takt_test_clock_end", R"(TEST_PROGRAM NeverEnds
VAR n : DINT; END_VAR
n := n + 1;
IF n < 0 THEN TEST_FINISHED(); END_IF;
END_TEST_PROGRAM
)");
    const CliRun r =
        takt("test --project " + dir.string() + " --output json --cycle-time 86400000 --max-cycles 1000000000");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    EXPECT_NE(r.out.find("TEST_FINISHED() not reached before the end of the virtual clock, in 87"), std::string::npos)
        << r.out;
}

TEST(TaktTest, TestFinishedOnlyInATestBody) {
    const fs::path dir = makeProject("takt_test_finished_outside", R"(FUNCTION_BLOCK Helper
TEST_FINISHED();
END_FUNCTION_BLOCK

TEST_FUNCTION_BLOCK T
METHOD Done
TEST_FINISHED();
END_METHOD
END_TEST_FUNCTION_BLOCK
)");
    const CliRun r = test::runTaktMerged("test --project " + dir.string());
    EXPECT_EQ(r.exitCode, 11) << r.out;
    EXPECT_NE(r.out.find("'TEST_FINISHED' is only allowed inside TEST_PROGRAM"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("'TEST_FINISHED' is only allowed in the body of a TEST_PROGRAM"), std::string::npos) << r.out;
}

// Ordering has no meaning for STRUCT/ARRAY values, and both operands of ASSERT_EQUAL need one
// type: coded compile errors, so `takt test` stops at the build.
TEST(TaktTest, AggregateAssertionDiagnostics) {
    const fs::path dir = makeProject("takt_test_aggregate_errors", R"(TYPE P : STRUCT x : INT; END_STRUCT; END_TYPE
TYPE Q : STRUCT x : INT; END_STRUCT; END_TYPE
TEST_PROGRAM T
VAR p : P; q : Q; a : ARRAY[1..3] OF INT; b : ARRAY[0..2] OF INT; END_VAR
ASSERT_GREATER(p, p);
ASSERT_LESS_OR_EQUAL(a, a);
ASSERT_NEAR(p, p, 1.0);
ASSERT_EQUAL(p, q);
ASSERT_NOT_EQUAL(a, b);
END_TEST_PROGRAM
)");
    const CliRun r = takt("check --project " + dir.string() + " --json");
    EXPECT_EQ(r.exitCode, 11) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    std::map<unsigned, std::pair<std::string, std::string>> got; // line -> code, message
    for (const auto& diag : d["diagnostics"].GetArray()) {
        EXPECT_EQ(got.count(diag["line"].GetUint()), 0u) << "a second diagnostic on line " << diag["line"].GetUint();
        got[diag["line"].GetUint()] = {diag["code"].GetString(), diag["message"].GetString()};
    }
    const std::map<unsigned, std::pair<std::string, std::string>> expected = {
        {5, {"E0711", "'ASSERT_GREATER' needs an ordering, which is not defined for STRUCT values ('P')"}},
        {6, {"E0711", "'ASSERT_LESS_OR_EQUAL' needs an ordering, which is not defined for ARRAY values"}},
        {7, {"E0711", "'ASSERT_NEAR' needs an ordering"}},
        {8, {"E0712", "'ASSERT_EQUAL' compares two values of one type, but they are 'P' and 'Q'"}},
        {9,
         {"E0712", "'ASSERT_NOT_EQUAL' compares two values of one type, but they are 'ARRAY [1..3] OF INT' and "
                   "'ARRAY [0..2] OF INT'"}},
    };
    EXPECT_EQ(got.size(), expected.size()) << r.out;
    for (const auto& [line, want] : expected) {
        EXPECT_EQ(got[line].first, want.first) << "line " << line;
        EXPECT_EQ(got[line].second.rfind(want.second, 0), 0u) << "line " << line << ": " << got[line].second;
    }
    EXPECT_EQ(takt("test --project " + dir.string()).exitCode, 11);
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

// truST's formal parameter names (IN; EXPECTED, ACTUAL; VALUE, BOUND; EXPECTED, ACTUAL, DELTA)
// and takt's (IN1, IN2), in any order; positional calls mean the same.
constexpr const char* kTrustNames = R"(TEST_PROGRAM FormalPass
VAR i : INT := 3; r : REAL := 1.5; END_VAR
ASSERT_TRUE(IN := i = 3);
ASSERT_FALSE(IN := i = 4, MESSAGE := 'named message');
ASSERT_EQUAL(EXPECTED := 3, ACTUAL := i);
ASSERT_NOT_EQUAL(ACTUAL := i, EXPECTED := 4);
ASSERT_GREATER(VALUE := i, BOUND := 2);
ASSERT_LESS(BOUND := 4, VALUE := i);
ASSERT_GREATER_OR_EQUAL(VALUE := i, BOUND := 3);
ASSERT_LESS_OR_EQUAL(IN1 := i, IN2 := 3);
ASSERT_NEAR(EXPECTED := 1.4, ACTUAL := r, DELTA := 0.2);
END_TEST_PROGRAM

TEST_PROGRAM BoundFirst
VAR d : DINT := -7; END_VAR
ASSERT_GREATER(BOUND := 0, VALUE := d);
END_TEST_PROGRAM

TEST_PROGRAM NearNamed
VAR r : LREAL := 2.5; END_VAR
ASSERT_NEAR(DELTA := 0.1, ACTUAL := r, EXPECTED := 2.0);
END_TEST_PROGRAM
)";

TEST(TaktTest, TrustParameterNames) {
    const fs::path dir = makeProject("takt_test_trust_names", kTrustNames);
    const CliRun r = takt("test --project " + dir.string() + " --output json");
    ASSERT_EQ(r.exitCode, 12) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    std::map<std::string, std::string> got;
    for (const auto& t : d["tests"].GetArray()) {
        got[t["name"].GetString()] = t["message"].GetString();
    }
    EXPECT_EQ(got["FormalPass"], "") << r.out;
    EXPECT_EQ(got["BoundFirst"].rfind("ASSERT_GREATER failed: -7 is not greater than 0 (", 0), 0u) << got["BoundFirst"];
    EXPECT_EQ(got["NearNamed"].rfind("ASSERT_NEAR failed: expected 2, actual 2.5, outside the allowed delta (", 0), 0u)
        << got["NearNamed"];
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
