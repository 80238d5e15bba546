// The debugger in a FUNCTION's frame and in an FB's VAR_TEMP, which the variable table does not
// hold (they exist only while the POU runs): program.stbc's frame layout names them, so a halted
// frame lists, evaluates and writes its parameters and locals, a VAR_IN_OUT shows (and is written
// through to) what it refers to, a breakpoint's condition reads them where the task stands, and
// flow control names them. A real compiled program on the base cycle, real time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "debug_live.h"

namespace takt::agent {
namespace {

using debug_test::flowRecorded;
using debug_test::flowValue;
using debug_test::lines;
using debug_test::Live;

// Line numbers are those of this text (line 1 is the empty line after R"().
const char* const kFrames = R"(
TYPE Point : STRUCT x : DINT; y : DINT; END_STRUCT; END_TYPE

FUNCTION Scale : DINT
  VAR_INPUT x : DINT; END_VAR
  VAR_IN_OUT p : Point; END_VAR
  VAR k : DINT := 3; END_VAR
  p.x := p.x + x;
  Scale := k * x;
END_FUNCTION

FUNCTION_BLOCK Acc
  VAR_OUTPUT n : DINT; END_VAR
  VAR_TEMP t : DINT; END_VAR
  t := n + 10;
  n := t - 9;
END_FUNCTION_BLOCK

PROGRAM Main
  VAR pt : Point; r : DINT; i : DINT; a : Acc; END_VAR
  FOR i := 1 TO 3 DO
    r := Scale(x := i, p := pt);
  END_FOR;
  a();
END_PROGRAM
)";
constexpr int kLineAdd = 8;
constexpr int kLineResult = 9;
constexpr int kLineTemp = 15;
constexpr int kLineUseTemp = 16;
constexpr int kLineLoop = 21;
constexpr int kLineCall = 22;

// The variable `name` of a debug.variables answer, as listed.
const rapidjson::Value* listed(const rapidjson::Document& d, const char* name) {
    for (const rapidjson::Value& v : d["variables"].GetArray()) {
        if (std::string_view(v["name"].GetString()) == name) {
            return &v;
        }
    }
    return nullptr;
}

std::string evaluate(Live& live, const std::string& expression, int frame = 0) {
    rapidjson::Document d = live.result("debug.evaluate", R"({"thread":1,"frame":)" + std::to_string(frame) +
                                                              R"(,"expression":")" + expression + "\"}");
    return d.HasMember("value") ? d["value"].GetString() : std::string();
}

// A condition on a FUNCTION's input halts the call where it holds; the frame's scopes list the
// parameters, the result and the locals; the VAR_IN_OUT is what it refers to (the caller's pt).
TEST(ControlDebugFrame, AFunctionsFrameListsItsParametersLocalsAndWhatAnInOutRefersTo) {
    Live live(kFrames);
    rapidjson::Document b = live.result(
        "debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":9,"condition":"x = 2 AND k = 3"}]})");
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool()) << rpc::toJson(b);
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Scale");
    EXPECT_EQ(stop["line"].GetInt(), kLineResult);
    rapidjson::Document t = live.result("debug.stackTrace", R"({"thread":1})");
    ASSERT_EQ(t["frames"].Size(), 2u);
    EXPECT_STREQ(t["frames"][0]["instance"].GetString(), "");
    EXPECT_EQ(t["frames"][1]["line"].GetInt(), kLineCall);

    rapidjson::Document in = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"inputs"})");
    EXPECT_EQ(Live::valueOf(in, "x"), "2");
    ASSERT_NE(listed(in, "x"), nullptr);
    EXPECT_TRUE((*listed(in, "x"))["inFrame"].GetBool());
    rapidjson::Document locals = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(locals, "k"), "3");
    EXPECT_EQ(Live::valueOf(locals, "x"), "") << "an input is not a local";
    rapidjson::Document out = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"outputs"})");
    EXPECT_EQ(Live::valueOf(out, "Scale"), "0") << "the result, not yet assigned in this call";
    const rapidjson::Value* p = listed(out, "p");
    ASSERT_NE(p, nullptr) << rpc::toJson(out);
    EXPECT_STREQ((*p)["type"].GetString(), "Point");
    ASSERT_TRUE((*p)["expandable"].GetBool());

    // The in-out expands to the caller's variable: the same value var.read reads there.
    const std::int64_t ptx = live.readInt("Main.pt.x");
    EXPECT_GT(ptx, 0);
    rapidjson::Document members = live.result("debug.variables", R"({"thread":1,"frame":0,"path":"p"})");
    EXPECT_EQ(Live::valueOf(members, "x"), std::to_string(ptx));
    EXPECT_EQ(evaluate(live, "p.x"), std::to_string(ptx));
    EXPECT_EQ(evaluate(live, "k * x + p.y"), "6");
    EXPECT_EQ(evaluate(live, "r + i", 1), evaluate(live, "Main.r + 2", 1)) << "the caller's frame: i is 2";
    const ControlAnswer outside = live.call("debug.variables", R"({"path":"p"})");
    EXPECT_EQ(outside.code, -32602) << "without the frame, p names nothing";

    // Writes in the frame: through the in-out to the caller's variable, and a local the rest of
    // the call uses.
    rapidjson::Document w = live.result("debug.setVariable", R"({"thread":1,"frame":0,"path":"p.y","value":"42"})");
    EXPECT_EQ(w["value"]["value"].GetInt(), 42);
    EXPECT_EQ(live.readInt("Main.pt.y"), 42);
    live.result("debug.setVariable", R"({"thread":1,"path":"k","value":"10"})");
    EXPECT_EQ(evaluate(live, "k"), "10");
    const ControlAnswer bad = live.call("debug.setVariable", R"({"thread":1,"path":"nope","value":"1"})");
    EXPECT_EQ(bad.code, -32602);
    EXPECT_NE(bad.message.find("nope"), std::string::npos) << bad.message;
    const ControlAnswer typed = live.call("debug.setVariable", R"({"thread":1,"path":"k","value":"TRUE"})");
    EXPECT_EQ(typed.code, -32602) << "var.write's type checks";
    EXPECT_EQ(evaluate(live, "k"), "10") << "a refused write changes nothing";

    // Over the rest of the call: back in Main, r holds what the written k gave.
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    live.result("debug.next", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    EXPECT_TRUE(stop["line"].GetInt() == kLineLoop || stop["line"].GetInt() == kLineCall) << stop["line"].GetInt();
    EXPECT_EQ(evaluate(live, "r"), "20");
    live.result("debug.detach");
}

// An FB's VAR_TEMP lies in its frame: listed with its locals, in its scope for an expression.
TEST(ControlDebugFrame, AnFbsTempIsALocalOfItsFrame) {
    Live live(kFrames);
    live.result("debug.setBreakpoints", lines(kLineUseTemp));
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Acc");
    rapidjson::Document locals = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"locals"})");
    EXPECT_STREQ(locals["instance"].GetString(), "Main.a");
    const std::int64_t n = live.readInt("Main.a.n");
    EXPECT_EQ(Live::valueOf(locals, "t"), std::to_string(n + 10));
    EXPECT_EQ(evaluate(live, "t - n"), "10");
    live.result("debug.detach");
}

// Flow control names what a FUNCTION's statements read and write in its frame.
TEST(ControlDebugFrame, FlowControlNamesAFunctionsParametersAndLocals) {
    Live live(kFrames);
    rapidjson::Document on = live.result("debug.setFlow", R"({"pou":"Scale"})");
    EXPECT_EQ(rpc::toJson(on["lines"]), "[" + std::to_string(kLineAdd) + "," + std::to_string(kLineResult) + "]");
    const rapidjson::Document d = flowRecorded(live);
    ASSERT_GT(d["run"].GetUint64(), 0u) << rpc::toJson(d);
    // The last call of the run: x = 3.
    EXPECT_EQ(flowValue(d, kLineResult, "x", "read"), 3);
    EXPECT_EQ(flowValue(d, kLineResult, "k", "read"), 3);
    EXPECT_EQ(flowValue(d, kLineResult, "Scale", "write"), 9);
    EXPECT_EQ(flowValue(d, kLineAdd, "x", "read"), 3);
    live.result("debug.setFlow", R"({"pou":"Acc"})");
    const rapidjson::Document fb = flowRecorded(live);
    ASSERT_GT(fb["run"].GetUint64(), 0u);
    EXPECT_EQ(flowValue(fb, kLineTemp, "t", "write"), flowValue(fb, kLineTemp, "n", "read") + 10);
    live.result("debug.detach");
}

// An FB's VAR_IN_OUT members hold where the caller's variables are (a slot, REF_TO in the type
// table): while the FB is halted they list, evaluate, expand and are written as the caller's
// variables, and a condition reads through them on the scan thread.
const char* const kInOutMembers = R"(
TYPE Point : STRUCT x : DINT; y : DINT; END_STRUCT; END_TYPE

FUNCTION_BLOCK Inc
  VAR_IN_OUT c : DINT; q : Point; END_VAR
  c := c + 1;
  q.x := c;
END_FUNCTION_BLOCK

PROGRAM Main
  VAR cnt : DINT; pt : Point; f : Inc; idle : Inc; END_VAR
  f(c := cnt, q := pt);
END_PROGRAM
)";
constexpr int kLineStoreX = 7;

TEST(ControlDebugFrame, AnFbsInOutMembersAreTheCallersVariables) {
    Live live(kInOutMembers);
    rapidjson::Document b = live.result(
        "debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":7,"condition":"c MOD 4 = 0"}]})");
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool()) << rpc::toJson(b);
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Inc");
    EXPECT_EQ(stop["line"].GetInt(), kLineStoreX);
    const std::int64_t cnt = live.readInt("Main.cnt");
    EXPECT_EQ(cnt % 4, 0) << "the condition read c through its slot";
    EXPECT_GT(cnt, 0);

    rapidjson::Document out = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"outputs"})");
    const rapidjson::Value* c = listed(out, "c");
    ASSERT_NE(c, nullptr) << rpc::toJson(out);
    EXPECT_STREQ((*c)["type"].GetString(), "DINT") << "the caller's variable, not the REF its slot holds";
    EXPECT_EQ(std::string((*c)["value"].GetString()), std::to_string(cnt));
    EXPECT_TRUE((*c)["inFrame"].GetBool()) << "it names the caller's variable only while halted here";
    const rapidjson::Value* q = listed(out, "q");
    ASSERT_NE(q, nullptr);
    EXPECT_STREQ((*q)["type"].GetString(), "Point");
    ASSERT_TRUE((*q)["expandable"].GetBool());

    live.result("debug.setVariable", R"({"thread":1,"frame":0,"path":"Main.pt.y","value":"17"})");
    rapidjson::Document members = live.result("debug.variables", R"({"thread":1,"frame":0,"path":"Main.f.q"})");
    EXPECT_EQ(Live::valueOf(members, "y"), "17");
    EXPECT_EQ(evaluate(live, "c * 2 + q.y"), std::to_string(cnt * 2 + 17));
    rapidjson::Document fb = live.result("debug.variables", R"({"thread":1,"frame":1,"path":"Main.f"})");
    EXPECT_EQ(Live::valueOf(fb, "c"), std::to_string(cnt)) << "an instance's members from its caller's frame";
    rapidjson::Document watched = live.result("debug.evaluate", R"({"thread":1,"frame":1,"expression":"f.c"})");
    EXPECT_STREQ(watched["type"].GetString(), "DINT");
    EXPECT_TRUE(watched["inFrame"].GetBool());

    // An instance never called: its slots are bound to nothing (0, the constants), so they are
    // neither followed, evaluated nor written through.
    const ControlAnswer unbound = live.call("debug.evaluate", R"({"thread":1,"frame":1,"expression":"idle.c"})");
    EXPECT_EQ(unbound.code, -32602);
    EXPECT_NE(unbound.message.find("refers to no variable"), std::string::npos) << unbound.message;
    const ControlAnswer write =
        live.call("debug.setVariable", R"({"thread":1,"frame":1,"path":"Main.idle.c","value":"5"})");
    EXPECT_EQ(write.code, -32602) << "a write through an unbound slot would land in the constants";
    rapidjson::Document idle = live.result("debug.variables", R"({"thread":1,"frame":1,"path":"Main.idle"})");
    const rapidjson::Value* slot = listed(idle, "c");
    ASSERT_NE(slot, nullptr);
    EXPECT_STRNE((*slot)["type"].GetString(), "DINT");
    EXPECT_FALSE((*slot)["inFrame"].GetBool());

    // Written through: the caller's cnt, seen by the statement the FB runs next (q.x := c).
    live.result("debug.setVariable", R"({"thread":1,"frame":0,"path":"Main.f.c","value":"1000"})");
    EXPECT_EQ(live.readInt("Main.cnt"), 1000);
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    live.result("debug.next", R"({"thread":1})");
    live.nextStop();
    EXPECT_EQ(live.readInt("Main.pt.x"), 1000);
    live.result("debug.detach");
}

// What breakpoint edits unlink (their compiled conditions) is freed once no task's run can read it:
// at once while the task runs between cycles, after the halted run ends when it is halted.
TEST(ControlDebugFrame, EditedConditionsAreFreedOnceNoRunCanReadThem) {
    Live live(kInOutMembers);
    const auto freedWithin = [&live](std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (live.control->retiredObjects() != 0 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            live.pollEvents();
        }
        return live.control->retiredObjects() == 0;
    };
    for (int i = 0; i < 50; ++i) {
        live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"condition":"c < 0"}]})");
    }
    EXPECT_TRUE(freedWithin(std::chrono::seconds(2))) << live.control->retiredObjects() << " left";

    live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"condition":"c > 0"}]})");
    live.nextStop();
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"condition":"c < 0"}]})");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    live.pollEvents();
    EXPECT_GE(live.control->retiredObjects(), 1u) << "the halted run may still read the condition it halted on";
    live.result("debug.continue", R"({"thread":1})");
    EXPECT_TRUE(freedWithin(std::chrono::seconds(2)));
    live.result("debug.detach");
}

} // namespace
} // namespace takt::agent
