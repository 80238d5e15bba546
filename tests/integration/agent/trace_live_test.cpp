// Traces through the real `takt run` and its control endpoint (docs/trace.md): a triggered capture
// whose samples are the program's known sequence, cycle by cycle; a BOOL's falling edge; the
// cycles of one task of two; a trace that runs on across an online change that keeps its
// variables and ends, saying why, at one that removes them; `takt trace` writing CSV; and the
// errors that name the parameter at fault.
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/json.h"

namespace takt::agent::live {
namespace {

// `cnt` counts the cycles, `sq` is twice it, `low` is TRUE for cnt MOD 10 < 5.
constexpr const char* kProgram = R"(PROGRAM Main
VAR
    cnt : DINT;
    sq : DINT;
    low : BOOL;
    name : STRING := 'x';
    arr : ARRAY[1..3] OF INT;
END_VAR
cnt := cnt + 1;
sq := cnt * 2;
low := (cnt MOD 10) < 5;
END_PROGRAM
)";

struct Project {
    test::TempDir dir;
    std::string endpoint;
    explicit Project(const std::string& program = kProgram, const std::string& tasks = "") {
        endpoint = "unix://" + (dir.path() / "ctl.sock").string();
        dir.write("runtime.toml",
                  fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 5\n\n"
                              "[runtime.control]\nendpoint = \"{}\"\n",
                              endpoint));
        dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
        dir.write("src/main.st", program + tasks);
    }
};

class TraceLive : public ::testing::Test {
protected:
    void start(Project& p) {
        rt_ = std::make_unique<Runtime>(p.dir.path());
        ASSERT_TRUE(waitServing(*rt_, clientOptions(p.endpoint))) << rt_->log();
        c_ = connected(clientOptions(p.endpoint));
    }
    // Polls trace.list until trace `id` is done (hang guard 20 s).
    bool waitDone(std::uint32_t id) {
        for (int i = 0; i < 400; ++i) {
            const rapidjson::Document list = result(*c_, "trace.list", "{}");
            for (const rapidjson::Value& t : list["traces"].GetArray()) {
                if (t["id"].GetUint() == id && std::string_view(t["state"].GetString()) == "done") {
                    return true;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
    std::int64_t cnt() { return result(*c_, "var.read", R"({"name":"cnt"})")["values"]["cnt"]["value"].GetInt64(); }
    void TearDown() override {
        if (rt_ != nullptr) {
            EXPECT_EQ(rt_->stop(), 0) << rt_->log();
        }
    }

    std::unique_ptr<Runtime> rt_;
    std::unique_ptr<ControlClient> c_;
};

TEST_F(TraceLive, ATriggeredCaptureHoldsTheProgramsSequenceAroundTheTrigger) {
    Project p;
    start(p);
    const std::int64_t level = cnt() + 200;
    const rapidjson::Document started =
        result(*c_, "trace.start",
               fmt::format(R"({{"variables":["cnt","sq"],"trigger":{{"variable":"cnt","edge":"rising","level":{}}},)"
                           R"("pre":10,"post":20}})",
                           level));
    EXPECT_STREQ(started["state"].GetString(), "armed");
    const std::uint32_t id = started["id"].GetUint();
    ASSERT_TRUE(waitDone(id)) << rt_->log();
    const rapidjson::Document read = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", id));
    ASSERT_EQ(read["samples"].GetUint(), 30u) << test::toJson(read);
    ASSERT_EQ(read["trigger_index"].GetUint(), 10u);
    const rapidjson::Value& rows = read["rows"];
    ASSERT_EQ(rows.Size(), 30u);
    for (rapidjson::SizeType i = 0; i < rows.Size(); ++i) {
        const rapidjson::Value& row = rows[i];
        EXPECT_EQ(row[2].GetInt64(), level - 10 + i) << i; // cnt: one sample per cycle, none lost
        EXPECT_EQ(row[3].GetInt64(), 2 * row[2].GetInt64()) << i;
        if (i > 0) {
            EXPECT_EQ(row[0].GetUint64(), rows[i - 1][0].GetUint64() + 1) << "cycle numbers consecutive";
            EXPECT_GT(row[1].GetDouble(), rows[i - 1][1].GetDouble()) << "time runs on";
        }
    }
    EXPECT_DOUBLE_EQ(rows[10][1].GetDouble(), 0.0); // time counts from the trigger
    EXPECT_LT(rows[0][1].GetDouble(), 0.0);
    // The same as CSV.
    const rapidjson::Document csv = result(*c_, "trace.read", fmt::format(R"({{"id":{},"format":"csv"}})", id));
    const std::string text = csv["csv"].GetString();
    EXPECT_EQ(text.substr(0, text.find('\n')), "cycle,time_ms,cnt,sq");
    EXPECT_NE(text.find(fmt::format(",0.000,{},{}\n", level, 2 * level)), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 31);
}

TEST_F(TraceLive, ABoolsFallingEdgeTriggers) {
    Project p;
    start(p);
    const rapidjson::Document started =
        result(*c_, "trace.start",
               R"({"variables":["low","cnt"],"trigger":{"variable":"low","edge":"falling"},"pre":3,"post":3})");
    const std::uint32_t id = started["id"].GetUint();
    ASSERT_TRUE(waitDone(id));
    const rapidjson::Document read = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", id));
    const rapidjson::Value& rows = read["rows"];
    // Up to 3 samples before the edge (fewer when it came within 3 samples of the start: the
    // first sample never triggers, so at least one) and 3 from it on.
    const std::size_t t = read["trigger_index"].GetUint();
    ASSERT_GE(t, 1u);
    ASSERT_LE(t, 3u);
    ASSERT_EQ(rows.Size(), t + 3);
    EXPECT_FALSE(rows[t][2].GetBool());
    EXPECT_TRUE(rows[t - 1][2].GetBool());
    EXPECT_EQ(rows[t][3].GetInt64() % 10, 5); // cnt MOD 10 = 5 is the first FALSE
}

TEST_F(TraceLive, OnlyTheCyclesOfTheNamedTaskAreSampled) {
    const std::string program = R"(PROGRAM Fast
VAR cnt : DINT; END_VAR
cnt := cnt + 1;
END_PROGRAM
PROGRAM Slow
VAR cnt : DINT; END_VAR
cnt := cnt + 1;
END_PROGRAM
)";
    const std::string tasks = R"(CONFIGURATION Cell
RESOURCE R ON PLC
    TASK FastTask(INTERVAL := T#5ms, PRIORITY := 1);
    TASK SlowTask(INTERVAL := T#50ms, PRIORITY := 2);
    PROGRAM F WITH FastTask : Fast;
    PROGRAM S WITH SlowTask : Slow;
END_RESOURCE
END_CONFIGURATION
)";
    Project p(program, tasks);
    start(p);
    const ControlReply noTask = c_->call("trace.start", R"({"variables":["F.cnt"]})");
    EXPECT_EQ(noTask.code, -32602);
    EXPECT_NE(noTask.message.find("its tasks: FastTask, SlowTask"), std::string::npos) << noTask.message;
    for (const char* task : {"FastTask", "SlowTask"}) {
        const std::string var = std::string(task) == "FastTask" ? "F.cnt" : "S.cnt";
        const rapidjson::Document started =
            result(*c_, "trace.start", fmt::format(R"({{"variables":["{}"],"task":"{}","post":8}})", var, task));
        const std::uint32_t id = started["id"].GetUint();
        ASSERT_TRUE(waitDone(id));
        const rapidjson::Document read = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", id));
        const rapidjson::Value& rows = read["rows"];
        ASSERT_EQ(rows.Size(), 8u);
        for (rapidjson::SizeType i = 1; i < rows.Size(); ++i) {
            EXPECT_EQ(rows[i][2].GetInt64(), rows[i - 1][2].GetInt64() + 1) << task << " sample " << i;
        }
        // Seven intervals of that task, not of the other (a late release is caught up at once,
        // so single gaps may be short).
        const double span = rows[7][1].GetDouble() - rows[0][1].GetDouble();
        EXPECT_GT(span, std::string(task) == "FastTask" ? 0.5 * 7 * 5 : 0.5 * 7 * 50) << task;
        result(*c_, "trace.remove", fmt::format(R"({{"id":{}}})", id));
    }
}

TEST_F(TraceLive, ATraceRunsOnAcrossAnOnlineChangeThatKeepsItsVariablesAndEndsAtOneThatRemovesThem) {
    Project p;
    start(p);
    // Version 2: a new variable, `low` gone, cnt and sq as they were; built before the traces
    // start, so the change lands inside the capture however long a build takes.
    Project v2(R"(PROGRAM Main
VAR
    extra : INT;
    cnt : DINT;
    sq : DINT;
END_VAR
cnt := cnt + 1;
sq := cnt * 2;
extra := extra + 1;
END_PROGRAM
)");
    const std::vector<std::uint8_t> bytes = build(v2.dir.path());
    ASSERT_FALSE(bytes.empty());
    const std::uint32_t keeps = result(*c_, "trace.start", R"({"variables":["cnt","sq"],"post":2000})")["id"].GetUint();
    const std::uint32_t loses = result(*c_, "trace.start", R"({"variables":["low"],"post":100000})")["id"].GetUint();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const ControlReply reload = c_->call("bytecode.reload", bytecodeReloadParams(bytes));
    ASSERT_TRUE(reload.ok) << reload.message;
    const std::uint64_t changedAt = parse(reload.json)["cycle"].GetUint64();
    ASSERT_TRUE(waitDone(keeps)) << rt_->log();
    const rapidjson::Document read = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", keeps));
    EXPECT_TRUE(read["ended"].IsNull());
    const rapidjson::Value& rows = read["rows"];
    ASSERT_EQ(rows.Size(), 2000u);
    ASSERT_LT(rows[0][0].GetUint64(), changedAt) << "the change landed inside the capture";
    ASSERT_GT(rows[1999][0].GetUint64(), changedAt);
    for (rapidjson::SizeType i = 1; i < rows.Size(); ++i) {
        ASSERT_EQ(rows[i][2].GetInt64(), rows[i - 1][2].GetInt64() + 1) << "a sample lost at " << i;
        ASSERT_EQ(rows[i][3].GetInt64(), 2 * rows[i][2].GetInt64());
    }
    // The other one ended at the change with what it had, and says why.
    ASSERT_TRUE(waitDone(loses));
    const rapidjson::Document lost = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", loses));
    ASSERT_TRUE(lost["ended"].IsString()) << test::toJson(lost);
    EXPECT_NE(std::string(lost["ended"].GetString()).find("low"), std::string::npos) << lost["ended"].GetString();
    EXPECT_GT(lost["samples"].GetUint(), 20u);
    EXPECT_LT(lost["samples"].GetUint(), 100000u);
}

// Without task threads an online change may give the program tasks: a trace of the cycle of a
// program without TASKs ends then, saying why, instead of waiting for cycles that never come.
TEST_F(TraceLive, AChangeThatGivesTheProgramTasksEndsATraceOfItsCycle) {
    Project p;
    start(p);
    Project v2(kProgram, R"(CONFIGURATION Cell
RESOURCE R ON PLC
    TASK Only(INTERVAL := T#5ms, PRIORITY := 1);
    PROGRAM Main WITH Only : Main;
END_RESOURCE
END_CONFIGURATION
)");
    const std::vector<std::uint8_t> bytes = build(v2.dir.path());
    ASSERT_FALSE(bytes.empty());
    const std::uint32_t id = result(*c_, "trace.start", R"({"variables":["cnt"],"post":100000})")["id"].GetUint();
    const ControlReply reload = c_->call("bytecode.reload", bytecodeReloadParams(bytes));
    ASSERT_TRUE(reload.ok) << reload.message;
    ASSERT_TRUE(waitDone(id));
    const rapidjson::Document read = result(*c_, "trace.read", fmt::format(R"({{"id":{}}})", id));
    ASSERT_TRUE(read["ended"].IsString()) << test::toJson(read);
    EXPECT_NE(std::string(read["ended"].GetString()).find("tasks"), std::string::npos) << read["ended"].GetString();
}

TEST_F(TraceLive, StopKeepsTheSamplesAndTaktTraceWritesThemAsCsv) {
    Project p;
    start(p);
    const ControlReply early = c_->call("trace.read", R"({"id":1})");
    EXPECT_EQ(early.code, -32602) << "no trace 1 yet";
    const std::uint32_t id =
        result(*c_, "trace.start", R"({"variables":["cnt","name"],"post":100000})")["id"].GetUint();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const ControlReply running = c_->call("trace.read", fmt::format(R"({{"id":{}}})", id));
    EXPECT_EQ(running.code, -32002);
    EXPECT_NE(running.message.find("stop it first"), std::string::npos) << running.message;
    const std::string base = std::string(TAKT_BINARY) + " trace ";
    ASSERT_EQ(shell(base + "stop " + std::to_string(id) + " --endpoint " + p.endpoint + " > /dev/null"), 0);
    const auto csvPath = p.dir.path() / "trace.csv";
    ASSERT_EQ(shell(base + "read " + std::to_string(id) + " --endpoint " + p.endpoint + " -o " + csvPath.string() +
                    " 2> " + (p.dir.path() / "read.log").string()),
              0)
        << readText(p.dir.path() / "read.log");
    const std::string text = readText(csvPath);
    EXPECT_EQ(text.substr(0, text.find('\n')), "cycle,time_ms,cnt,name");
    const auto lines = std::count(text.begin(), text.end(), '\n');
    EXPECT_GT(lines, 10);
    EXPECT_NE(text.find(",'x'\n"), std::string::npos) << text.substr(0, 200);
    // The list shows it stopped; remove drops it.
    const rapidjson::Document list = result(*c_, "trace.list", "{}");
    ASSERT_EQ(list["traces"].Size(), 1u);
    EXPECT_FALSE(list["traces"][0]["running"].GetBool());
    result(*c_, "trace.remove", fmt::format(R"({{"id":{}}})", id));
    EXPECT_EQ(result(*c_, "trace.list", "{}")["traces"].Size(), 0u);
}

TEST_F(TraceLive, BadRequestsNameTheParameterAndStartNothing) {
    Project p;
    start(p);
    struct Case {
        const char* params;
        int code;
        const char* member;
        const char* says;
    };
    const Case cases[] = {
        {R"({"variables":["cnt","nope"]})", -32602, "variables[1]", "nope"},
        {R"({"variables":["arr"]})", -32602, "variables[0]", "ARRAY"},
        {R"({"variables":["cnt"],"trigger":{"variable":"name","edge":"rising","level":1}})", -32602, "trigger.variable",
         "BOOL or a number"},
        {R"({"variables":["cnt"],"trigger":{"variable":"low","edge":"rising","level":1}})", -32602, "trigger.level",
         "BOOL"},
        {R"({"variables":["cnt"],"trigger":{"variable":"cnt","edge":"rising"}})", -32602, "trigger.level", "level"},
        {R"({"variables":["cnt"],"pre":5})", -32602, "pre", "trigger"},
        {R"({"variables":["cnt"],"task":"Nope"})", -32602, "task", "Nope"},
        {R"({"variables":["cnt"],"trigger":{"variable":"cnt","edge":"up","level":1}})", -32602, "edge", ""},
    };
    for (const Case& k : cases) {
        const ControlReply r = c_->call("trace.start", k.params);
        EXPECT_EQ(r.code, k.code) << k.params << " " << r.message;
        EXPECT_NE(r.message.find(k.member), std::string::npos) << k.params << " " << r.message;
        EXPECT_NE(r.message.find(k.says), std::string::npos) << k.params << " " << r.message;
    }
    EXPECT_EQ(result(*c_, "trace.list", "{}")["traces"].Size(), 0u);
    for (int i = 0; i < 4; ++i) {
        result(*c_, "trace.start", R"({"variables":["cnt"],"post":100000})");
    }
    const ControlReply fifth = c_->call("trace.start", R"({"variables":["cnt"]})");
    EXPECT_EQ(fifth.code, -32002);
    EXPECT_NE(fifth.message.find("trace.remove"), std::string::npos) << fifth.message;
}

} // namespace
} // namespace takt::agent::live
