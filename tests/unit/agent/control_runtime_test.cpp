// The control endpoint's methods on a live scan loop (RuntimeControl), called directly: a real
// compiled ST program on the VM, a real ScanLoop at 2 ms, a loopback process I/O. Every answer
// comes from poll() after the scan thread applied the command at a cycle boundary.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "../engine/scan_test_support.h"
#include "control/control_client.h"
#include "rpc/method_table.h"
#include "rpc/rpc_json.h"
#include "takt/agent/control_runtime.h"
#include "takt/bytecode/container.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/engine/vm_runner.h"

namespace takt::agent {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// Counts every cycle in a RETAIN variable, mirrors %IX0.0 to a variable, and writes %QB1.
const char* const kV1 = R"(
PROGRAM Main
VAR RETAIN cnt : DINT; END_VAR
VAR
  limit : INT := 5;
  seen AT %IX0.0 : BOOL;
  mirror : BOOL;
  out AT %QB1 : BYTE;
  v1only : INT;
END_VAR
cnt := cnt + 1;
mirror := seen;
out := 16#11;
v1only := 1;
END_PROGRAM
)";

// The same counter and I/O; v1only is gone, v2only is new, limit changed type.
const char* const kV2 = R"(
PROGRAM Main
VAR RETAIN cnt : DINT; END_VAR
VAR
  limit : DINT := 9;
  seen AT %IX0.0 : BOOL;
  mirror : BOOL;
  out AT %QB1 : BYTE;
  v2only : INT := 42;
END_VAR
cnt := cnt + 1;
mirror := seen;
out := 16#22;
END_PROGRAM
)";

// Through compileProgram, like `takt build`: the bytes are what program.stbc would hold.
compiler::CompiledProgram compileText(const char* text) {
    compiler::Project project = compiler::checkSources({{"main.st", text}});
    compiler::CompiledProgram compiled = compiler::compileProgram(project);
    EXPECT_TRUE(compiled.ok()) << compiler::renderHuman(compiled.diagnostics, *project.sources) << compiled.failure;
    return compiled;
}

std::string stbcBase64(const char* text) {
    return detail::base64(compileText(text).bytes);
}

// kV1's counter behind a loop that keeps the scan thread busy for about half of a 2 ms cycle: a
// command that starts the program is applied long before the cycle's end publishes a snapshot.
const char* const kBusy = R"(
PROGRAM Main
VAR RETAIN cnt : DINT; END_VAR
VAR i : DINT; acc : DINT; END_VAR
cnt := cnt + 1;
FOR i := 1 TO 40000 DO acc := acc + i MOD 7; END_FOR;
END_PROGRAM
)";

struct Live {
    explicit Live(const char* program = kV1) {
        engine = std::make_unique<engine::Engine>(std::make_unique<engine::VmRunner>(0), clock);
        const compiler::CompiledProgram v1 = compileText(program);
        engine::FaultReport f;
        EXPECT_TRUE(engine->load(std::make_unique<engine::LoadedProgram>(v1.module, v1.hash), f));
        engine::ScanOptions o;
        o.periodNs = 2 * kMs;
        o.watchdog.enabled = false;
        loop = std::make_unique<engine::ScanLoop>(*engine, clock, io, o);
        std::string error;
        EXPECT_TRUE(loop->start(error)) << error;
        control = std::make_unique<RuntimeControl>(*loop, *engine, RuntimeControlOptions{});
    }
    ~Live() { loop->stop(); }

    // Starts a method as the server does (params checked against the method's schema first);
    // `reply` runs now or from a later poll().
    void start(const std::string& method, const rapidjson::Value& doc, const ControlReplyFn& reply) {
        const ControlMethod* m = rpc::findMethod(control->methods(), method);
        rpc::ParamsSchemas schemas;
        rpc::Error e;
        if (m == nullptr) {
            reply(ControlAnswer::error(-32601, "not listed"));
        } else if (schemas.add(rpc::factsOf(*m)); !schemas.check(method, doc, e)) {
            reply(ControlAnswer::error(e.code, e.message, e.data));
        } else {
            m->handler(*control, m->name, doc, reply);
        }
    }

    // Calls a method and polls until it is answered (params as JSON text).
    ControlAnswer call(const std::string& method, const std::string& params = "{}") {
        rapidjson::Document doc;
        doc.Parse(params.c_str());
        std::optional<ControlAnswer> answer;
        start(method, doc, [&answer](ControlAnswer a) { answer = std::move(a); });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        std::vector<std::string> ev;
        while (!answer && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(500));
            control->poll(ev);
        }
        events.insert(events.end(), ev.begin(), ev.end());
        EXPECT_TRUE(answer.has_value()) << method << " was not answered";
        return answer.value_or(ControlAnswer::error(0, "no answer"));
    }

    rapidjson::Document result(const std::string& method, const std::string& params = "{}") {
        const ControlAnswer a = call(method, params);
        EXPECT_TRUE(a.ok) << method << ": " << a.code << " " << a.message;
        rapidjson::Document d;
        d.Parse(a.json.c_str());
        return d;
    }

    std::int64_t readInt(const std::string& name) {
        rapidjson::Document d = result("var.read", "{\"names\":[\"" + name + "\"]}");
        return d["values"][name.c_str()]["value"].GetInt64();
    }

    engine::CycleClock clock;
    takt::testing::FakeIo io;
    std::unique_ptr<engine::Engine> engine;
    std::unique_ptr<engine::ScanLoop> loop;
    std::unique_ptr<RuntimeControl> control;
    std::vector<std::string> events;
};

TEST(ControlRuntime, StatusReportsTheRunningProgram) {
    Live live;
    rapidjson::Document s = live.result("runtime.status");
    EXPECT_STREQ(s["state"].GetString(), "running");
    EXPECT_EQ(std::string(s["program_hash"].GetString()), live.control->programHash());
    EXPECT_EQ(live.control->programHash().size(), 64u);
    EXPECT_TRUE(s["fault"].IsNull());
}

TEST(ControlRuntime, VarReadSeesTheCounterAtTheCycleBoundary) {
    Live live;
    rapidjson::Document d = live.result("var.read", R"({"names":["cnt","Main.limit"]})");
    // Read at a boundary before the cycle runs: cnt equals the cycles already run.
    EXPECT_EQ(d["values"]["cnt"]["value"].GetInt64(), d["cycle"].GetInt64());
    EXPECT_STREQ(d["values"]["cnt"]["type"].GetString(), "DINT");
    EXPECT_EQ(d["values"]["Main.limit"]["value"].GetInt(), 5);
}

TEST(ControlRuntime, VarWriteIsAppliedAndBadValuesChangeNothing) {
    Live live;
    EXPECT_TRUE(live.call("var.write", R"({"name":"limit","value":{"type":"INT","value":1234}})").ok);
    EXPECT_EQ(live.readInt("limit"), 1234);
    const ControlAnswer tooBig = live.call("var.write", R"({"name":"limit","value":{"type":"INT","value":70000}})");
    EXPECT_FALSE(tooBig.ok);
    EXPECT_EQ(tooBig.code, -32602);
    const ControlAnswer unknown = live.call("var.write", R"({"name":"nosuch","value":{"type":"INT","value":1}})");
    EXPECT_EQ(unknown.code, -32602);
    EXPECT_EQ(live.readInt("limit"), 1234);
}

// var.writeMany: each item checked as var.write checks it and answered on its own; the good ones
// are written by one command (one cycle), in the order given; each item is an audit entry.
TEST(ControlRuntime, VarWriteManyWritesTheGoodItemsAtOneBoundaryAndAnswersEachItem) {
    Live live;
    const ControlAnswer a = live.call("var.writeMany", R"({"items":[
        {"name":"limit","value":{"type":"INT","value":7}},
        {"name":"nosuch","value":{"type":"INT","value":1}},
        {"name":"Main.limit","value":{"type":"INT","value":70000}},
        {"name":"out","value":"T#1s"},
        {"name":"Main.limit","value":"16#9"}]})");
    ASSERT_TRUE(a.ok) << a.message;
    rapidjson::Document d;
    d.Parse(a.json.c_str());
    ASSERT_TRUE(d["cycle"].IsUint64());
    const rapidjson::Value& r = d["results"];
    ASSERT_EQ(r.Size(), 5u);
    EXPECT_STREQ(r[0]["name"].GetString(), "limit");
    EXPECT_EQ(r[0]["value"]["value"].GetInt(), 7);
    EXPECT_STREQ(r[1]["name"].GetString(), "nosuch");
    EXPECT_EQ(r[1]["error"]["code"].GetInt(), -32602);
    EXPECT_NE(std::string(r[2]["error"]["message"].GetString()).find("does not fit INT"), std::string::npos);
    EXPECT_EQ(r[3]["error"]["code"].GetInt(), -32602);
    EXPECT_EQ(r[4]["value"]["value"].GetInt(), 9);
    // The later of two items for one variable is what it holds.
    EXPECT_EQ(live.readInt("limit"), 9);
    ASSERT_EQ(a.items.size(), 5u);
    EXPECT_EQ(a.items[0], (std::pair<std::string, int>{"limit", 0}));
    EXPECT_EQ(a.items[1], (std::pair<std::string, int>{"nosuch", -32602}));
    EXPECT_EQ(a.items[4].second, 0);
    // No item at all, or too many: the params are refused, nothing is written.
    EXPECT_EQ(live.call("var.writeMany", R"({"items":[]})").code, -32602);
    std::string many = R"({"items":[)";
    for (int i = 0; i < 1025; ++i) {
        many += std::string(i == 0 ? "" : ",") + R"({"name":"limit","value":{"type":"INT","value":1}})";
    }
    EXPECT_EQ(live.call("var.writeMany", many + "]}").code, -32602);
    EXPECT_EQ(live.readInt("limit"), 9);
}

TEST(ControlRuntime, ForcedVariableWinsOverTheProgramUntilUnforced) {
    Live live;
    ASSERT_TRUE(live.call("var.force", R"({"name":"cnt","value":{"type":"DINT","value":-7}})").ok);
    EXPECT_EQ(live.readInt("cnt"), -7);
    EXPECT_EQ(live.readInt("cnt"), -7); // still, cycles later
    rapidjson::Document f = live.result("var.forced");
    ASSERT_EQ(f["forced"].Size(), 1u);
    EXPECT_STREQ(f["forced"][0]["name"].GetString(), "cnt");
    ASSERT_TRUE(live.call("var.unforce", R"({"name":"cnt"})").ok);
    // The program counts on from the forced value.
    EXPECT_GT(live.readInt("cnt"), -7);
    EXPECT_EQ(live.call("var.unforce", R"({"name":"cnt"})").code, -32602);
}

TEST(ControlRuntime, WritesAndForcesAcceptIecLiteralText) {
    Live live;
    ASSERT_TRUE(live.call("var.write", R"({"name":"limit","value":"16#7F"})").ok);
    EXPECT_EQ(live.readInt("limit"), 0x7F);
    ASSERT_TRUE(live.call("var.force", R"({"name":"cnt","value":"-9"})").ok);
    EXPECT_EQ(live.readInt("cnt"), -9);
    ASSERT_TRUE(live.call("var.unforce", R"({"name":"cnt"})").ok);
    ASSERT_TRUE(live.call("io.force", R"({"address":"%IX0.0","value":"TRUE"})").ok);
    (void)live.result("var.read", R"({"names":["mirror"]})");
    EXPECT_TRUE(live.result("var.read", R"({"names":["mirror"]})")["values"]["mirror"]["value"].GetBool());
    const ControlAnswer bad = live.call("var.write", R"({"name":"limit","value":"T#1s"})");
    EXPECT_EQ(bad.code, -32602);
    EXPECT_NE(bad.message.find("value: 'T#1s' is not a INT literal; expected an integer"), std::string::npos)
        << bad.message;
    EXPECT_NE(live.call("var.write", R"({"name":"limit","value":"70000"})").message.find("does not fit INT"),
              std::string::npos);
    EXPECT_EQ(live.readInt("limit"), 0x7F);
}

// An enumeration's values come with its variables (and arrays of it), what the OPC UA server
// serves as their EnumStrings / EnumValues.
TEST(ControlRuntime, VarListGivesTheValuesOfAnEnumeration) {
    Live live(R"(
TYPE Level : (Low := 10, High := 20); END_TYPE
PROGRAM Main
VAR
  lvl : Level := Level#High;
  lvls : ARRAY[0..1] OF Level;
  n : INT;
END_VAR
n := n + 1;
END_PROGRAM
)");
    rapidjson::Document d = live.result("var.list", R"({"pattern":"Main.*"})");
    std::map<std::string, std::string> enums;
    for (const rapidjson::Value& v : d["variables"].GetArray()) {
        enums[v["path"].GetString()] = v.HasMember("enum") ? rpc::toJson(v["enum"]) : "";
    }
    const std::string level = R"([{"name":"Low","value":10},{"name":"High","value":20}])";
    EXPECT_EQ(enums["Main.lvl"], level);
    EXPECT_EQ(enums["Main.lvls"], level);
    EXPECT_EQ(enums["Main.n"], "");
}

TEST(ControlRuntime, VarListPagesAndFiltersTheSymbols) {
    Live live;
    rapidjson::Document all = live.result("var.list");
    const rapidjson::SizeType total = all["total"].GetUint();
    ASSERT_GE(total, 6u); // Main, cnt, limit, seen, mirror, out, v1only (at least these)
    ASSERT_EQ(all["variables"].Size(), total);
    bool sawSeen = false;
    for (const rapidjson::Value& v : all["variables"].GetArray()) {
        if (std::string_view(v["path"].GetString()) == "Main.seen") {
            sawSeen = true;
            EXPECT_STREQ(v["type"].GetString(), "BOOL");
            EXPECT_STREQ(v["address"].GetString(), "%IX0.0");
        }
        if (std::string_view(v["path"].GetString()) == "Main.cnt") {
            EXPECT_TRUE(v["retain"].GetBool());
            EXPECT_TRUE(v["address"].IsNull());
        }
    }
    EXPECT_TRUE(sawSeen);
    // Paging: two at a time covers the same rows in order.
    rapidjson::Document page = live.result("var.list", R"({"offset":1,"limit":2})");
    EXPECT_EQ(page["total"].GetUint(), total);
    ASSERT_EQ(page["variables"].Size(), 2u);
    EXPECT_STREQ(page["variables"][0]["path"].GetString(), all["variables"][1]["path"].GetString());
    EXPECT_EQ(live.result("var.list", R"({"offset":100000})")["variables"].Size(), 0u);
    // A substring is case-insensitive; a glob must match the whole path.
    rapidjson::Document sub = live.result("var.list", R"({"pattern":"MIRR"})");
    ASSERT_EQ(sub["total"].GetUint(), 1u);
    EXPECT_STREQ(sub["variables"][0]["path"].GetString(), "Main.mirror");
    EXPECT_EQ(live.result("var.list", R"({"pattern":"main.v?only"})")["total"].GetUint(), 1u);
    EXPECT_EQ(live.result("var.list", R"({"pattern":"*.o*"})")["total"].GetUint(), 1u); // Main.out
    EXPECT_EQ(live.result("var.list", R"({"pattern":"mirr*"})")["total"].GetUint(), 0u);
    // Forced shows; bad paging is refused by the schema.
    ASSERT_TRUE(live.call("var.force", R"({"name":"mirror","value":"TRUE"})").ok);
    EXPECT_TRUE(live.result("var.list", R"({"pattern":"mirror"})")["variables"][0]["forced"].GetBool());
    EXPECT_EQ(live.call("var.list", R"({"limit":0})").code, -32602);
    EXPECT_EQ(live.call("var.list", R"({"limit":1001})").code, -32602);
}

// An SFC chart's bookkeeping (its actions' flags, its steps' members other than X and T) is in
// the image but not in what var.list and var.read show; the steps, their X and T, the
// transition's name and the user's variables are.
TEST(ControlRuntime, VarListAndVarReadLeaveOutTheChartsBookkeeping) {
    Live live(R"(
PROGRAM Main
VAR go : BOOL; lamp : BOOL; END_VAR
    INITIAL_STEP Idle:
        lamp(S);
    END_STEP
    STEP Run:
        Work(P);
        lamp(R);
    END_STEP
    TRANSITION Start FROM Idle TO Run := go; END_TRANSITION
    ACTION Work: go := FALSE; END_ACTION
END_PROGRAM
)");
    std::vector<std::string> paths;
    const rapidjson::Document list = live.result("var.list");
    for (const rapidjson::Value& v : list["variables"].GetArray()) {
        paths.emplace_back(v["path"].GetString());
    }
    const std::vector<std::string> expected = {"Main.go", "Main.lamp", "Main.Idle", "Main.Run", "Main.Start"};
    EXPECT_EQ(paths, expected);
    EXPECT_EQ(live.result("var.list", R"({"pattern":"*$*"})")["total"].GetUint(), 0u);
    rapidjson::Document read = live.result("var.read", R"({"names":["Main.Idle","Main.Idle.X"]})");
    const rapidjson::Value& fields = read["values"]["Main.Idle"]["fields"];
    ASSERT_TRUE(fields.IsObject());
    std::vector<std::string> names;
    for (auto it = fields.MemberBegin(); it != fields.MemberEnd(); ++it) {
        names.emplace_back(it->name.GetString());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"X", "T"}));
    EXPECT_TRUE(read["values"]["Main.Idle.X"]["value"].GetBool());
    // The program instance's own value leaves out the action flags as well.
    rapidjson::Document main = live.result("var.read", R"({"names":["Main"]})");
    for (auto it = main["values"]["Main"]["fields"].MemberBegin(); it != main["values"]["Main"]["fields"].MemberEnd();
         ++it) {
        EXPECT_EQ(std::string_view(it->name.GetString()).find('$'), std::string_view::npos) << it->name.GetString();
    }
}

TEST(ControlRuntime, IoForceOfAnInputReachesTheProgram) {
    Live live;
    ASSERT_TRUE(live.call("io.force", R"({"address":"%IX0.0","value":{"type":"BOOL","value":true}})").ok);
    rapidjson::Document d = live.result("var.read", R"({"names":["mirror"]})");
    // Applied before the program ran in the cycle that answered; read one boundary later.
    d = live.result("var.read", R"({"names":["mirror"]})");
    EXPECT_TRUE(d["values"]["mirror"]["value"].GetBool());
    rapidjson::Document q = live.result("io.read", R"({"addresses":["%QB1","%IX0.0"]})");
    EXPECT_EQ(q["values"]["%QB1"]["value"].GetInt(), 0x11);
    EXPECT_TRUE(q["values"]["%IX0.0"]["value"].GetBool());
    EXPECT_EQ(live.call("io.read", R"({"addresses":["%QZ1"]})").code, -32602);
}

// io.* reads addresses with the compiler's grammar: %IX0 is %IX0.0, %QB1.0 is %QB1; the answer
// names each by its canonical spelling.
TEST(ControlRuntime, IoAcceptsTheShortAndHierarchicalAddressForms) {
    Live live;
    ASSERT_TRUE(live.call("io.force", R"({"address":"%IX0","value":{"type":"BOOL","value":true}})").ok);
    (void)live.result("var.read", R"({"names":["mirror"]})");
    rapidjson::Document d = live.result("var.read", R"({"names":["mirror"]})");
    EXPECT_TRUE(d["values"]["mirror"]["value"].GetBool());
    rapidjson::Document q = live.result("io.read", R"({"addresses":["%QB1.0","%I0"]})");
    EXPECT_EQ(q["values"]["%QB1"]["value"].GetInt(), 0x11);
    EXPECT_TRUE(q["values"]["%IX0.0"]["value"].GetBool());
    EXPECT_EQ(live.call("io.read", R"({"addresses":["%QB1.2"]})").code, -32602);
    EXPECT_EQ(live.call("io.read", R"({"addresses":["%IX*"]})").code, -32602);
}

TEST(ControlRuntime, PauseStepResumeRunExactlyTheCyclesAsked) {
    Live live;
    ASSERT_TRUE(live.call("runtime.pause").ok);
    const std::int64_t before = live.readInt("cnt");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(live.readInt("cnt"), before);
    ASSERT_TRUE(live.call("runtime.step", R"({"count":3})").ok);
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.readInt("cnt") == before + 3; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(live.readInt("cnt"), before + 3);
    EXPECT_STREQ(live.result("runtime.status")["state"].GetString(), "paused");
    ASSERT_TRUE(live.call("runtime.resume").ok);
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.readInt("cnt") > before + 5; }));
    EXPECT_EQ(live.call("runtime.step", R"({"count":0})").code, -32602);
}

TEST(ControlRuntime, StopLatchesTheSafeStateAndStartReleasesIt) {
    Live live;
    ASSERT_TRUE(live.call("runtime.stop").ok);
    EXPECT_EQ(live.io.wire(1), takt::testing::FakeIo::kSafe);
    EXPECT_STREQ(live.result("runtime.status")["state"].GetString(), "stopped");
    ASSERT_TRUE(live.call("runtime.start").ok);
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.wire(1) == 0x11; }));
}

TEST(ControlRuntime, ReloadDryRunReportsThePlanAndAppliesNothing) {
    Live live;
    const std::string oldHash = live.control->programHash();
    ASSERT_TRUE(live.call("var.write", R"({"name":"limit","value":{"type":"INT","value":7}})").ok);
    const ControlAnswer a = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV2) + "\",\"dry_run\":true}");
    ASSERT_TRUE(a.ok) << a.message;
    rapidjson::Document r;
    r.Parse(a.json.c_str());
    EXPECT_TRUE(r["dry_run"].GetBool());
    EXPECT_EQ(std::string(r["old_hash"].GetString()), oldHash);
    EXPECT_NE(std::string(r["new_hash"].GetString()), oldHash);
    EXPECT_TRUE(r["loses_state"].GetBool()); // v1only is dropped
    bool sawLimit = false;
    for (const auto& v : r["variables"].GetArray()) {
        if (std::string(v["path"].GetString()) == "Main.limit") {
            sawLimit = true;
            EXPECT_STREQ(v["outcome"].GetString(), "converted");
            EXPECT_STREQ(v["from"].GetString(), "INT");
            EXPECT_STREQ(v["to"].GetString(), "DINT");
        }
        if (std::string(v["path"].GetString()) == "Main.v1only") {
            EXPECT_STREQ(v["outcome"].GetString(), "dropped");
        }
    }
    EXPECT_TRUE(sawLimit) << a.json;
    EXPECT_FALSE(r.HasMember("swap_pause_us"));
    // Nothing changed: the program, its values, its variables.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(live.control->programHash(), oldHash);
    rapidjson::Document d = live.result("var.read", R"({"names":["limit","v1only"]})");
    EXPECT_EQ(d["values"]["limit"]["value"].GetInt(), 7);
    EXPECT_TRUE(d["values"].HasMember("v1only"));
    // A change that names another running program is refused, nothing applied.
    const ControlAnswer stale =
        live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV2) + "\",\"expected_hash\":\"0000\"}");
    EXPECT_FALSE(stale.ok);
    EXPECT_NE(stale.message.find("not the expected 0000"), std::string::npos) << stale.message;
    EXPECT_EQ(live.control->programHash(), oldHash);
    EXPECT_EQ(live.call("bytecode.reload", "{\"bytes\":\"AA==\",\"dry_run\":1}").code, -32602);
}

// runtime.stop / start / pause / step answer with the state they left. They used to read the
// published snapshot when the answer was built, which the scan thread refreshes only at the end
// of the cycle: a start applied before a long cycle answered "stopped", a step answered before
// its cycles ran.
TEST(ControlRuntime, RunControlAnswersWithTheStateItLeft) {
    Live live(kBusy);
    const auto answer = [&live](const char* method, const std::string& params = "{}") {
        rapidjson::Document d = live.result(method, params);
        return std::make_pair(std::string(d["state"].GetString()), d["cycle"].GetUint64());
    };
    for (int round = 0; round < 20; ++round) {
        EXPECT_EQ(answer("runtime.stop").first, "stopped") << "round " << round;
        EXPECT_STREQ(live.result("runtime.status")["state"].GetString(), "stopped") << "round " << round;
        EXPECT_EQ(answer("runtime.start").first, "running") << "round " << round;
        EXPECT_STREQ(live.result("runtime.status")["state"].GetString(), "running") << "round " << round;
    }
    const auto [paused, at] = answer("runtime.pause");
    EXPECT_EQ(paused, "paused");
    // A step answers once its cycles have run: paused again, at the cycle it paused at.
    const auto [stepped, cycle] = answer("runtime.step", R"({"count":3})");
    EXPECT_EQ(stepped, "paused");
    EXPECT_EQ(cycle, at + 3);
    EXPECT_EQ(live.readInt("cnt"), static_cast<std::int64_t>(cycle));
    EXPECT_EQ(answer("runtime.resume").first, "running");
    EXPECT_EQ(answer("runtime.restart", R"({"mode":"warm"})").first, "running");
}

TEST(ControlRuntime, ReloadKeepsStateAndReportsTheTransfer) {
    Live live;
    const std::string oldHash = live.control->programHash();
    const ControlAnswer a = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV2) + "\"}");
    ASSERT_TRUE(a.ok) << a.message;
    rapidjson::Document r;
    r.Parse(a.json.c_str());
    EXPECT_EQ(std::string(r["old_hash"].GetString()), oldHash);
    EXPECT_EQ(std::string(r["new_hash"].GetString()), live.control->programHash());
    EXPECT_NE(oldHash, live.control->programHash());
    EXPECT_EQ(r["retyped"].GetUint(), 1u); // limit: INT -> DINT
    EXPECT_GE(r["dropped"].GetUint(), 1u); // v1only
    EXPECT_GE(r["initialised"].GetUint(), 1u);
    EXPECT_GE(r["swap_pause_us"].GetDouble(), 0.0);
    // The RETAIN counter went on across the swap: one per cycle, none lost or doubled.
    rapidjson::Document d = live.result("var.read", R"({"names":["cnt","v2only","limit"]})");
    EXPECT_EQ(d["values"]["cnt"]["value"].GetInt64(), d["cycle"].GetInt64());
    EXPECT_EQ(d["values"]["v2only"]["value"].GetInt(), 42);
    EXPECT_EQ(d["values"]["limit"]["value"].GetInt(), 5) << "INT -> DINT keeps the running value";
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.wire(1) == 0x22; }));
}

TEST(ControlRuntime, InvalidReloadsLeaveTheProgramRunning) {
    Live live;
    const std::string hash = live.control->programHash();
    EXPECT_EQ(live.call("bytecode.reload", R"({"bytes":"not base64!"})").code, -32602);
    std::vector<std::uint8_t> bytes = compileText(kV2).bytes;
    bytes[bytes.size() / 2] ^= 0x40; // a flipped bit: CRC mismatch
    const ControlAnswer crc = live.call("bytecode.reload", "{\"bytes\":\"" + detail::base64(bytes) + "\"}");
    EXPECT_EQ(crc.code, -32002);
    std::vector<std::uint8_t> future = compileText(kV2).bytes;
    future[4] = 0x7F; // the format version field
    EXPECT_EQ(live.call("bytecode.reload", "{\"bytes\":\"" + detail::base64(future) + "\"}").code, -32002);
    EXPECT_EQ(live.control->programHash(), hash);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 0u);
    const std::int64_t c = live.readInt("cnt");
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.readInt("cnt") > c; }));
    std::vector<std::string> ev;
    live.control->poll(ev);
    live.events.insert(live.events.end(), ev.begin(), ev.end());
    const auto rejected = std::count_if(live.events.begin(), live.events.end(), [](const std::string& e) {
        return e.find("reload_rejected") != std::string::npos;
    });
    EXPECT_EQ(rejected, 2);
}

// The same refusal as `takt run` gives for this program.stbc (compile_path_test.cpp).
TEST(ControlRuntime, AReloadTheVerifierRejectsLeavesTheProgramRunning) {
    Live live;
    const std::string hash = live.control->programHash();
    bytecode::Module bad = *compileText(kV2).module;
    bad.initCode = static_cast<std::uint32_t>(bad.code.size()) + 64;
    const ControlAnswer a =
        live.call("bytecode.reload", "{\"bytes\":\"" + detail::base64(bytecode::serialize(bad)) + "\"}");
    EXPECT_EQ(a.code, -32002);
    EXPECT_NE(a.message.find("rejected by the verifier"), std::string::npos) << a.message;
    EXPECT_EQ(live.control->programHash(), hash);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 0u);
}

TEST(ControlRuntime, IdempotencyKeyAppliesAReloadOnce) {
    Live live;
    const std::string params = "{\"bytes\":\"" + stbcBase64(kV2) + "\",\"idempotency_key\":\"deploy-17\"}";
    const ControlAnswer first = live.call("bytecode.reload", params);
    ASSERT_TRUE(first.ok) << first.message;
    const ControlAnswer again = live.call("bytecode.reload", params);
    ASSERT_TRUE(again.ok);
    EXPECT_EQ(again.json, first.json);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 1u);
}

// Two reloads sent before the first is applied: the second is refused at once (the first one's
// prepared change is the only one in flight), the first lands, and the next reload after its
// answer is accepted again.
TEST(ControlRuntime, ASecondReloadWhileOneIsInFlightIsRefusedAndTheFirstLands) {
    Live live;
    const std::string v1Hash = live.control->programHash();
    rapidjson::Document first;
    first.Parse(("{\"bytes\":\"" + stbcBase64(kV2) + "\"}").c_str());
    std::optional<ControlAnswer> firstAnswer;
    live.start("bytecode.reload", first, [&](ControlAnswer a) { firstAnswer = std::move(a); });
    const ControlAnswer second = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV1) + "\"}");
    EXPECT_FALSE(second.ok);
    EXPECT_NE(second.message.find("already in progress"), std::string::npos) << second.message;
    ASSERT_TRUE(takt::testing::waitFor([&] {
        std::vector<std::string> ev;
        live.control->poll(ev);
        return firstAnswer.has_value();
    }));
    ASSERT_TRUE(firstAnswer->ok) << firstAnswer->message;
    EXPECT_NE(live.control->programHash(), v1Hash);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 1u);
    EXPECT_EQ(live.readInt("v2only"), 42);
    const ControlAnswer back = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV1) + "\"}");
    ASSERT_TRUE(back.ok) << back.message;
    EXPECT_EQ(live.control->programHash(), v1Hash);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 2u);
}

// runtime.rollback brings back the program the last online change replaced, as an online change
// of its own (the RETAIN counter goes on), previewed first with dry_run; the two then trade places.
TEST(ControlRuntime, RollbackBringsBackTheProgramTheLastChangeReplaced) {
    Live live;
    const std::string v1Hash = live.control->programHash();
    const ControlAnswer none = live.call("runtime.rollback");
    EXPECT_EQ(none.code, -32002);
    EXPECT_NE(none.message.find("no program to roll back to"), std::string::npos) << none.message;
    ASSERT_TRUE(live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV2) + "\"}").ok);
    const std::string v2Hash = live.control->programHash();
    ASSERT_NE(v2Hash, v1Hash);

    rapidjson::Document preview = live.result("runtime.rollback", R"({"dry_run":true})");
    EXPECT_TRUE(preview["dry_run"].GetBool());
    EXPECT_EQ(std::string(preview["new_hash"].GetString()), v1Hash);
    EXPECT_EQ(live.control->programHash(), v2Hash) << "a preview applies nothing";
    EXPECT_EQ(live.call("runtime.rollback", R"({"expected_hash":"0000"})").code, -32002);
    EXPECT_EQ(live.control->programHash(), v2Hash);

    rapidjson::Document back = live.result("runtime.rollback", "{\"expected_hash\":\"" + v2Hash + "\"}");
    EXPECT_FALSE(back["dry_run"].GetBool());
    EXPECT_EQ(std::string(back["old_hash"].GetString()), v2Hash);
    EXPECT_EQ(std::string(back["new_hash"].GetString()), v1Hash);
    EXPECT_EQ(live.control->programHash(), v1Hash);
    rapidjson::Document d = live.result("var.read", R"({"names":["cnt","limit"]})");
    EXPECT_EQ(d["values"]["cnt"]["value"].GetInt64(), d["cycle"].GetInt64()) << "the counter went on";
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.wire(1) == 0x11; }));
    EXPECT_EQ(live.readInt("v1only"), 1);

    // Rolled back twice: the change that was undone is applied again.
    rapidjson::Document again = live.result("runtime.rollback");
    EXPECT_EQ(std::string(again["new_hash"].GetString()), v2Hash);
    EXPECT_EQ(live.readInt("v2only"), 42);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 3u);
}

// Two tasks on scan threads of their own, then a program with three: the threads are made at
// start, so the change is refused, and the running program stays the one requests resolve in.
TEST(ControlRuntime, AChangedTaskListIsRefusedAndTheRunningProgramStaysCurrent) {
    const auto program = [](bool third) {
        return std::string(R"(
PROGRAM Count
VAR n : DINT; END_VAR
n := n + 1;
END_PROGRAM
CONFIGURATION C
  RESOURCE R ON PLC
    TASK Fast (INTERVAL := T#2ms, PRIORITY := 0);
    TASK Slow (INTERVAL := T#10ms, PRIORITY := 1);
)") + (third ? "    TASK Third (INTERVAL := T#20ms, PRIORITY := 2);\n    PROGRAM p3 WITH Third : Count;\n" : "") +
               R"(    PROGRAM p1 WITH Fast : Count;
    PROGRAM p2 WITH Slow : Count;
  END_RESOURCE
END_CONFIGURATION
)";
    };
    const std::string two = program(false);
    const std::string three = program(true);
    Live live(two.c_str());
    ASSERT_TRUE(live.loop->taskThreads());
    const std::string hash = live.control->programHash();
    for (const bool dryRun : {true, false}) {
        const ControlAnswer a = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(three.c_str()) +
                                                                 "\",\"dry_run\":" + (dryRun ? "true" : "false") + "}");
        EXPECT_EQ(a.code, -32002) << dryRun;
        EXPECT_NE(a.message.find("the tasks changed"), std::string::npos) << a.message;
        EXPECT_EQ(live.control->programHash(), hash) << dryRun;
    }
    EXPECT_EQ(std::string(live.result("runtime.status")["program_hash"].GetString()), hash);
    EXPECT_EQ(live.call("var.read", R"({"names":["p3.n"]})").code, -32602) << "p3 is not in the running program";
    EXPECT_GT(live.readInt("p1.n"), 0);
    EXPECT_EQ(live.result("runtime.status")["reloads"].GetUint(), 0u);
}

// The scan thread applies the prepared change at its next boundary while the program is paused:
// the new program is in place, no cycle ran in between, and resuming runs it.
TEST(ControlRuntime, ReloadWhilePausedSwapsWithoutRunningACycle) {
    Live live;
    ASSERT_TRUE(live.call("runtime.pause").ok);
    const std::int64_t before = live.readInt("cnt");
    const ControlAnswer a = live.call("bytecode.reload", "{\"bytes\":\"" + stbcBase64(kV2) + "\"}");
    ASSERT_TRUE(a.ok) << a.message;
    EXPECT_STREQ(live.result("runtime.status")["state"].GetString(), "paused");
    EXPECT_EQ(live.readInt("cnt"), before); // RETAIN value carried over, no cycle ran
    EXPECT_EQ(live.readInt("v2only"), 42);
    ASSERT_TRUE(live.call("runtime.resume").ok);
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.wire(1) == 0x22; }));
    EXPECT_GT(live.readInt("cnt"), before);
}

TEST(ControlRuntime, StatsReportPerTaskAndOverallFigures) {
    Live live;
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.loop->snapshot().cycles > 10; }));
    rapidjson::Document s = live.result("runtime.stats");
    EXPECT_GT(s["cycles"].GetUint64(), 10u);
    EXPECT_TRUE(s["exec"].HasMember("p99_us"));
    EXPECT_TRUE(s["lateness"].HasMember("max_us"));
    EXPECT_TRUE(s["lateness"].HasMember("min_us"));
    EXPECT_LE(s["lateness"]["min_us"].GetDouble(), s["lateness"]["p99_us"].GetDouble());
    EXPECT_GT(s["rss_bytes"].GetUint64(), 0u);
    EXPECT_TRUE(s["tasks"].IsArray());
}

// Two tasks, so each runs on a scan thread of its own: each has a last execution time of its own
// (the web page's "exec last"); a task in the base cycle has none (null).
TEST(ControlRuntime, StatsGiveEachTaskOnItsOwnThreadItsLastExecutionTime) {
    {
        Live live(R"(
PROGRAM Fast VAR n : DINT; END_VAR n := n + 1; END_PROGRAM
PROGRAM Slow VAR n : DINT; END_VAR n := n + 1; END_PROGRAM
CONFIGURATION Cfg RESOURCE R ON PLC
    TASK FastT (INTERVAL := T#2ms, PRIORITY := 1);
    TASK SlowT (INTERVAL := T#6ms, PRIORITY := 2);
    PROGRAM F WITH FastT : Fast;
    PROGRAM S WITH SlowT : Slow;
END_RESOURCE END_CONFIGURATION
)");
        ASSERT_TRUE(live.loop->taskThreads());
        ASSERT_TRUE(takt::testing::waitFor([&] { return live.loop->taskThread(1)->cycles.load() > 3; }));
        rapidjson::Document s = live.result("runtime.stats");
        ASSERT_EQ(s["tasks"].Size(), 2u);
        for (const auto& t : s["tasks"].GetArray()) {
            EXPECT_TRUE(t["thread"].GetBool()) << t["name"].GetString();
            ASSERT_TRUE(t["last_exec_us"].IsNumber()) << t["name"].GetString();
            EXPECT_GT(t["last_exec_us"].GetDouble(), 0.0) << t["name"].GetString();
            EXPECT_LE(t["last_exec_us"].GetDouble(), t["exec"]["max_us"].GetDouble() + 0.1) << t["name"].GetString();
        }
    }
    Live one(R"(
PROGRAM Fast VAR n : DINT; END_VAR n := n + 1; END_PROGRAM
CONFIGURATION Cfg RESOURCE R ON PLC
    TASK FastT (INTERVAL := T#2ms, PRIORITY := 1);
    PROGRAM F WITH FastT : Fast;
END_RESOURCE END_CONFIGURATION
)");
    ASSERT_TRUE(takt::testing::waitFor([&] { return one.loop->snapshot().cycles > 3; }));
    rapidjson::Document base = one.result("runtime.stats");
    ASSERT_EQ(base["tasks"].Size(), 1u);
    EXPECT_FALSE(base["tasks"][0]["thread"].GetBool());
    EXPECT_TRUE(base["tasks"][0]["last_exec_us"].IsNull());
}

} // namespace
} // namespace takt::agent
