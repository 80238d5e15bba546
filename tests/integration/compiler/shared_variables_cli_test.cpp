// `takt check --shared-variables`: per pair of tasks, the variables both use and how, as text
// and as one JSON document on stdout; the diagnostics still go to stderr.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;

constexpr const char* kTwoTasks = R"(TYPE Setpoint : STRUCT speed : INT; ramp : REAL; END_STRUCT; END_TYPE
VAR_GLOBAL
    target : Setpoint;
    cycles : LINT;
    onlyFast : INT;
    preset : Setpoint;
END_VAR
PROGRAM Fast
    cycles := cycles + 1;
    target := preset;
    onlyFast := 1;
END_PROGRAM
PROGRAM Slow
VAR s : INT; n : LINT; END_VAR
    s := target.speed;
    n := cycles;
END_PROGRAM
CONFIGURATION Plant
    RESOURCE Cpu ON PLC
        TASK FastTask (INTERVAL := T#2ms, PRIORITY := 0);
        TASK SlowTask (INTERVAL := T#50ms, PRIORITY := 5);
        PROGRAM F WITH FastTask : Fast;
        PROGRAM S WITH SlowTask : Slow;
    END_RESOURCE
END_CONFIGURATION
)";

TEST(SharedVariablesCli, ListsEachPairWithDirections) {
    TempDir dir;
    dir.write("src/main.st", kTwoTasks);
    RunResult r = runTakt("check --shared-variables", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, "tasks FastTask and SlowTask share 2 variables:\n"
                     "  cycles : LINT  FastTask read, write, SlowTask read\n"
                     "  target : Setpoint  FastTask write, SlowTask read  (not atomic: W0016)\n");
    EXPECT_NE(r.err.find("warning[W0016]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0 errors, 1 warning "), std::string::npos) << r.err;
}

TEST(SharedVariablesCli, JsonDocument) {
    TempDir dir;
    dir.write("src/main.st", kTwoTasks);
    RunResult r = runTakt("check --shared-variables --json", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    rapidjson::Document doc;
    ASSERT_FALSE(doc.Parse(r.out.c_str()).HasParseError()) << r.out;
    ASSERT_TRUE(doc["tasks"].IsArray());
    EXPECT_EQ(doc["tasks"].Size(), 2u);
    const auto& shared = doc["shared"];
    ASSERT_EQ(shared.Size(), 1u);
    EXPECT_STREQ(shared[0]["tasks"][0].GetString(), "FastTask");
    EXPECT_STREQ(shared[0]["tasks"][1].GetString(), "SlowTask");
    const auto& vars = shared[0]["variables"];
    ASSERT_EQ(vars.Size(), 2u);
    EXPECT_STREQ(vars[1]["name"].GetString(), "target");
    EXPECT_FALSE(vars[1]["atomic"].GetBool());
    EXPECT_TRUE(vars[1]["first"]["write"].GetBool());
    EXPECT_FALSE(vars[1]["second"]["write"].GetBool());
    EXPECT_TRUE(vars[1]["warning"].GetBool());
    EXPECT_TRUE(vars[0]["atomic"].GetBool());
    EXPECT_FALSE(vars[0]["warning"].GetBool());
}

TEST(SharedVariablesCli, SingleTaskSharesNothing) {
    TempDir dir;
    dir.write("src/main.st", "PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n");
    RunResult r = runTakt("check --shared-variables", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, "fewer than two tasks: no variable is shared between tasks\n");
}

} // namespace
