// The debug.* methods of the control endpoint on a live scan loop (RuntimeControl, called
// directly as the server calls it): a real compiled ST program with two tasks on threads of their
// own, real time. A breakpoint halts the slow task inside an FB it calls in a loop; the fast task
// keeps running; stepping, the call chain, variables, a write while halted, and the end of the
// session that resumes the task.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "control/control_client.h"
#include "debug_live.h"
#include "rpc/method_table.h"
#include "rpc/rpc_json.h"
#include "support/paths.h"

namespace takt::agent {
namespace {

using debug_test::flowRecorded;
using debug_test::flowValue;
using debug_test::lines;
using debug_test::Live;

// Line numbers are those of this text (line 1 is the empty line after R"().
const char* const kTwoTasks = R"(
FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  VAR calls : DINT; END_VAR
  calls := calls + 1;
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM SlowProg
  VAR acc : Accum; i : DINT; cycles : DINT; END_VAR
  FOR i := 1 TO 3 DO
    acc(x := i);
  END_FOR;
  cycles := cycles + 1;
END_PROGRAM

PROGRAM FastProg
  VAR cycles : DINT; END_VAR
  cycles := cycles + 1;
END_PROGRAM

VAR_GLOBAL
  shared : INT := 7;
END_VAR

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#10ms, PRIORITY := 2);
    PROGRAM pFast WITH Fast : FastProg;
    PROGRAM pSlow WITH Slow : SlowProg;
  END_RESOURCE
END_CONFIGURATION
)";
constexpr int kLineCalls = 6;
constexpr int kLineTotal = 7;
constexpr int kLineCall = 13;
constexpr std::uint32_t kSlowThread = 2; // the second task

// One program on the base cycle: no CONFIGURATION (kOneTask), or one with a single task.
const char* const kOneTask = R"(
FUNCTION_BLOCK Count
  VAR_OUTPUT n : DINT; END_VAR
  n := n + 1;
END_FUNCTION_BLOCK

PROGRAM Main
VAR cnt : DINT; c : Count; seen : DINT; END_VAR
cnt := cnt + 1;
c();
seen := c.n;
END_PROGRAM
)";
const std::string kOneTaskConfigured = std::string(kOneTask) + R"(
CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Cyclic (INTERVAL := T#2ms, PRIORITY := 1);
    PROGRAM pMain WITH Cyclic : Main;
  END_RESOURCE
END_CONFIGURATION
)";
constexpr int kLineCount = 4;
constexpr int kLineCnt = 9;
constexpr int kLineCallCount = 10;
constexpr int kLineSeen = 11;

TEST(ControlDebug, RefusedUnlessDebugEnabled) {
    Live live(kTwoTasks, false);
    const ControlAnswer a = live.call("debug.setBreakpoints", lines(kLineCalls));
    EXPECT_FALSE(a.ok);
    EXPECT_NE(a.message.find("debug_enabled = true"), std::string::npos) << a.message;
    EXPECT_FALSE(live.call("debug.threads").ok);
}

TEST(ControlDebug, SettingAndHaltingNeedEngineerReadingViewer) {
    for (const char* m : {"debug.setBreakpoints", "debug.continue", "debug.next", "debug.stepIn", "debug.stepOut",
                          "debug.pause", "debug.detach", "debug.setFlow"}) {
        const ControlMethod* entry = rpc::findMethod(RuntimeControl::methodTable(), m);
        ASSERT_NE(entry, nullptr) << m;
        EXPECT_EQ(entry->role, Role::Engineer) << m;
    }
    for (const char* m :
         {"debug.threads", "debug.stackTrace", "debug.variables", "debug.evaluate", "debug.flowValues"}) {
        const ControlMethod* entry = rpc::findMethod(RuntimeControl::methodTable(), m);
        ASSERT_NE(entry, nullptr) << m;
        EXPECT_EQ(entry->role, Role::Viewer) << m;
    }
}

TEST(ControlDebug, LinesResolveOrSayWhyNot) {
    Live live(kTwoTasks);
    rapidjson::Document d =
        live.result("debug.setBreakpoints", R"({"file":"/home/me/project/src/main.st","lines":[3,6,400]})");
    ASSERT_TRUE(d.HasMember("breakpoints"));
    const rapidjson::Value& b = d["breakpoints"];
    ASSERT_EQ(b.Size(), 3u);
    // A declaration moves on to the first statement after it.
    EXPECT_TRUE(b[0]["verified"].GetBool());
    EXPECT_EQ(b[0]["resolved_line"].GetInt(), kLineCalls);
    EXPECT_TRUE(b[1]["verified"].GetBool());
    EXPECT_EQ(b[1]["resolved_line"].GetInt(), kLineCalls);
    EXPECT_FALSE(b[2]["verified"].GetBool());
    EXPECT_NE(std::string(b[2]["reason"].GetString()).find("no statement at or after line 400"), std::string::npos);
    d = live.result("debug.setBreakpoints", R"({"file":"other.st","lines":[2]})");
    EXPECT_FALSE(d["breakpoints"][0]["verified"].GetBool());
    EXPECT_NE(std::string(d["breakpoints"][0]["reason"].GetString()).find("no file other.st"), std::string::npos);
    live.result("debug.detach");
}

// A program on the base cycle halts as a whole: the one thread is the base cycle, which still
// answers var.read and var.write while halted (no cycle runs: the counter stands still, the
// watchdog does not trip), refuses a change of the run state, and runs on when the session ends.
TEST(ControlDebug, ABreakpointHaltsTheBaseCycleOfAProgramWithoutTasks) {
    Live live(kOneTask);
    rapidjson::Document d = live.result("debug.setBreakpoints", lines(kLineCnt));
    ASSERT_TRUE(d.HasMember("breakpoints"));
    EXPECT_TRUE(d["breakpoints"][0]["verified"].GetBool()) << d["breakpoints"][0]["reason"].GetString();
    rapidjson::Document stop = live.nextStop();
    ASSERT_TRUE(stop.HasMember("line"));
    EXPECT_EQ(stop["thread"].GetUint(), 1u);
    EXPECT_STREQ(stop["task"].GetString(), "base cycle");
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    EXPECT_EQ(stop["line"].GetInt(), kLineCnt);
    rapidjson::Document threads = live.result("debug.threads");
    ASSERT_EQ(threads["threads"].Size(), 1u);
    EXPECT_TRUE(threads["threads"][0]["halted"].GetBool());
    rapidjson::Document s = live.result("runtime.status");
    ASSERT_EQ(s["halted"].Size(), 1u);
    EXPECT_STREQ(s["halted"][0]["task"].GetString(), "base cycle");

    // Served while halted: reads and writes; the cycle does not run on, the watchdog does not trip.
    const std::int64_t cnt = live.readInt("Main.cnt");
    std::this_thread::sleep_for(std::chrono::milliseconds(150)); // beyond the 100 ms watchdog
    EXPECT_EQ(live.readInt("Main.cnt"), cnt);
    EXPECT_EQ(live.result("runtime.status")["state"].GetString(), std::string("running")) << "no watchdog trip";
    rapidjson::Document locals = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(locals, "cnt"), std::to_string(cnt));
    ASSERT_TRUE(live.call("var.write", R"({"name":"Main.cnt","value":"1000"})").ok);
    EXPECT_EQ(live.readInt("Main.cnt"), 1000) << "written at once, in the halted cycle";
    const ControlAnswer pause = live.call("runtime.pause");
    EXPECT_FALSE(pause.ok);
    EXPECT_NE(pause.message.find("halted in the debugger"), std::string::npos) << pause.message;

    // Continue: the statement runs on the written value; the next cycle halts at it again.
    live.result("debug.continue", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_EQ(stop["line"].GetInt(), kLineCnt);
    EXPECT_EQ(live.readInt("Main.cnt"), 1001);

    live.control->sessionClosed(1); // the connection closed: the base cycle runs on
    EXPECT_FALSE(live.result("debug.threads")["threads"][0]["halted"].GetBool());
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    EXPECT_GT(live.readInt("Main.cnt"), 1001 + 5);
    EXPECT_TRUE(live.call("runtime.pause").ok) << "the run state changes again";
}

TEST(ControlDebug, TheBaseCycleOfAOneTaskProgramPausesAndSteps) {
    Live live(kOneTaskConfigured.c_str());
    live.result("debug.pause", R"({"thread":1})");
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["task"].GetString(), "Cyclic");
    EXPECT_STREQ(stop["reason"].GetString(), "pause");
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    // Wherever it paused, the breakpoint at the call brings it there.
    live.result("debug.setBreakpoints", lines(kLineCallCount));
    live.result("debug.continue", R"({"thread":1})");
    stop = live.nextStop();
    ASSERT_EQ(stop["line"].GetInt(), kLineCallCount);
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    live.result("debug.stepIn", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["reason"].GetString(), "step");
    EXPECT_STREQ(stop["pou"].GetString(), "Count");
    EXPECT_EQ(stop["line"].GetInt(), kLineCount);
    rapidjson::Document t = live.result("debug.stackTrace", R"({"thread":1})");
    ASSERT_EQ(t["frames"].Size(), 2u);
    EXPECT_STREQ(t["frames"][0]["instance"].GetString(), "pMain.c");
    EXPECT_STREQ(t["frames"][1]["instance"].GetString(), "pMain");
    live.result("debug.stepOut", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    EXPECT_EQ(stop["line"].GetInt(), kLineSeen);
    // Step over off the end of the program: the first statement of the next cycle.
    live.result("debug.next", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_EQ(stop["line"].GetInt(), kLineCnt);
    live.result("debug.continue", R"({"thread":1})");
    const std::int64_t cnt = live.readInt("pMain.cnt");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GT(live.readInt("pMain.cnt"), cnt);
}

// runtime.stop never waits for a debugger: it ends the session's hold and the program stops,
// whether the base cycle or a task on a thread of its own was halted.
TEST(ControlDebug, RuntimeStopEndsAHalt) {
    for (const char* program : {kOneTask, kTwoTasks}) {
        Live live(program);
        live.result("debug.setBreakpoints", lines(program == kOneTask ? kLineCnt : kLineCalls));
        ASSERT_TRUE(live.nextStop().HasMember("line"));
        rapidjson::Document stopped = live.result("runtime.stop");
        EXPECT_STREQ(stopped["state"].GetString(), "stopped");
        EXPECT_EQ(live.result("runtime.status")["halted"].Size(), 0u);
        const rapidjson::Document threads = live.result("debug.threads");
        for (const rapidjson::Value& t : threads["threads"].GetArray()) {
            EXPECT_FALSE(t["halted"].GetBool()) << t["name"].GetString();
        }
    }
}

TEST(ControlDebug, ABreakpointInAnFbHaltsItsTaskWhileTheOtherRuns) {
    Live live(kTwoTasks);
    rapidjson::Document b = live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool());
    rapidjson::Document stop = live.nextStop();
    ASSERT_TRUE(stop.HasMember("line"));
    EXPECT_EQ(stop["thread"].GetUint(), kSlowThread);
    EXPECT_STREQ(stop["task"].GetString(), "Slow");
    EXPECT_STREQ(stop["reason"].GetString(), "breakpoint");
    EXPECT_STREQ(stop["pou"].GetString(), "Accum");
    EXPECT_STREQ(stop["file"].GetString(), "src/main.st");
    EXPECT_EQ(stop["line"].GetInt(), kLineCalls);

    // Where it halted: runtime.status, the call chain with instance paths, innermost first.
    rapidjson::Document s = live.result("runtime.status");
    ASSERT_EQ(s["halted"].Size(), 1u);
    EXPECT_STREQ(s["halted"][0]["task"].GetString(), "Slow");
    EXPECT_STREQ(s["halted"][0]["pou"].GetString(), "Accum");
    EXPECT_EQ(s["halted"][0]["line"].GetInt(), kLineCalls);
    rapidjson::Document t = live.result("debug.stackTrace", R"({"thread":2})");
    ASSERT_EQ(t["frames"].Size(), 2u);
    EXPECT_STREQ(t["frames"][0]["instance"].GetString(), "pSlow.acc");
    EXPECT_EQ(t["frames"][0]["line"].GetInt(), kLineCalls);
    EXPECT_STREQ(t["frames"][1]["pou"].GetString(), "SlowProg");
    EXPECT_STREQ(t["frames"][1]["instance"].GetString(), "pSlow");
    EXPECT_EQ(t["frames"][1]["line"].GetInt(), kLineCall);
    EXPECT_FALSE(live.call("debug.stackTrace", R"({"thread":1})").ok) << "the fast task is not halted";

    // The fast task runs on; the halted one does not count cycles.
    const std::int64_t slow = live.readInt("pSlow.cycles");
    const std::int64_t fast = live.readInt("pFast.cycles");
    std::this_thread::sleep_for(std::chrono::milliseconds(150)); // beyond the 100 ms watchdog
    EXPECT_GT(live.readInt("pFast.cycles"), fast + 10);
    EXPECT_EQ(live.readInt("pSlow.cycles"), slow);
    EXPECT_EQ(live.result("runtime.status")["state"].GetString(), std::string("running")) << "no watchdog trip";

    // The frame's scopes: inputs, outputs and locals of pSlow.acc; the globals.
    rapidjson::Document in = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"inputs"})");
    EXPECT_STREQ(in["instance"].GetString(), "pSlow.acc");
    EXPECT_EQ(Live::valueOf(in, "x"), "1"); // the first call of the loop
    rapidjson::Document locals = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(locals, "calls"), std::to_string(3 * slow));
    EXPECT_EQ(Live::valueOf(locals, "x"), "") << "an input is not a local";
    rapidjson::Document outer = live.result("debug.variables", R"({"thread":2,"frame":1,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(outer, "i"), "1");
    EXPECT_EQ(Live::valueOf(outer, "acc"), "Accum");
    rapidjson::Document members = live.result("debug.variables", R"({"path":"pSlow.acc"})");
    EXPECT_EQ(Live::valueOf(members, "x"), "1");
    rapidjson::Document globals = live.result("debug.variables", R"({"scope":"globals"})");
    EXPECT_EQ(Live::valueOf(globals, "shared"), "7");

    live.result("debug.continue", R"({"thread":2})");
    stop = live.nextStop(); // the same breakpoint, the loop's second call
    EXPECT_EQ(stop["line"].GetInt(), kLineCalls);
    in = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"inputs"})");
    EXPECT_EQ(Live::valueOf(in, "x"), "2");
}

// [runtime.debug] outputs = "hold", the default: the outputs keep the values last written.
TEST(ControlDebug, AHaltHoldsTheOutputsByDefault) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // 25 base cycles
    EXPECT_EQ(live.io.safeCalls.load(), 0);
    EXPECT_GT(live.io.writes.load(), 0);
}

// outputs = "safe": from the first base cycle after a task halts the outputs are in the safe
// state, and they are taken out of it when the task runs on.
TEST(ControlDebug, WithSafeOutputsAHaltPutsTheOutputsInTheSafeStateUntilTheTaskRunsOn) {
    Live live(kTwoTasks, true, engine::Execution::Interpreter, true);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.safeCalls.load() == 1; }));
    EXPECT_EQ(live.io.wire(0), takt::testing::FakeIo::kSafe);
    EXPECT_EQ(live.io.releases.load(), 0);
    live.result("debug.setBreakpoints", R"({"file":"/home/me/project/src/main.st","lines":[]})");
    live.result("debug.continue", R"({"thread":2})");
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.releases.load() == 1; }));
    EXPECT_EQ(live.io.safeCalls.load(), 1);
    EXPECT_EQ(live.result("runtime.status")["state"].GetString(), std::string("running"));
}

// The base cycle halted with outputs = "safe", then stopped: the program's outputs never reach
// the field again, neither when the stop lets the halted cycle run to its end nor after.
TEST(ControlDebug, WithSafeOutputsAStopOfTheHaltedBaseCycleKeepsThemSafe) {
    Live live(kOneTask, true, engine::Execution::Interpreter, true);
    live.result("debug.setBreakpoints", lines(kLineCnt));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    ASSERT_TRUE(takt::testing::waitFor([&] { return live.io.safeCalls.load() >= 1; }));
    const int fieldWrites = live.io.fieldWrites.load();
    ASSERT_TRUE(live.call("runtime.stop").ok);
    ASSERT_TRUE(takt::testing::waitFor(
        [&] { return live.result("runtime.status")["state"].GetString() == std::string("stopped"); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(live.io.fieldWrites.load(), fieldWrites);
    EXPECT_EQ(live.io.releases.load(), 0);
    EXPECT_EQ(live.io.wire(0), takt::testing::FakeIo::kSafe);
}

TEST(ControlDebug, AValueWrittenWhileHaltedIsWhatTheTaskRunsOn) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    ASSERT_TRUE(live.call("var.write", R"({"name":"pSlow.acc.calls","value":"1000"})").ok);
    live.result("debug.continue", R"({"thread":2})");
    ASSERT_TRUE(live.nextStop().HasMember("line")); // the next call: calls := calls + 1 ran once
    rapidjson::Document locals = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(locals, "calls"), "1001");
}

TEST(ControlDebug, StepsOverIntoAndOut) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCall));
    rapidjson::Document stop = live.nextStop();
    ASSERT_EQ(stop["line"].GetInt(), kLineCall);
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    live.result("debug.stepIn", R"({"thread":2})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["reason"].GetString(), "step");
    EXPECT_STREQ(stop["pou"].GetString(), "Accum");
    EXPECT_EQ(stop["line"].GetInt(), kLineCalls);
    live.result("debug.next", R"({"thread":2})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "Accum");
    EXPECT_EQ(stop["line"].GetInt(), kLineTotal);
    live.result("debug.stepOut", R"({"thread":2})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["pou"].GetString(), "SlowProg");
    rapidjson::Document t = live.result("debug.stackTrace", R"({"thread":2})");
    EXPECT_EQ(t["frames"].Size(), 1u);
    // Continue with no breakpoint left: the task cycles again.
    live.result("debug.continue", R"({"thread":2})");
    const std::int64_t slow = live.readInt("pSlow.cycles");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GT(live.readInt("pSlow.cycles"), slow);
}

TEST(ControlDebug, PauseHaltsATaskAtItsNextStatement) {
    Live live(kTwoTasks);
    live.result("debug.pause", R"({"thread":1})");
    rapidjson::Document stop = live.nextStop();
    EXPECT_EQ(stop["thread"].GetUint(), 1u);
    EXPECT_STREQ(stop["reason"].GetString(), "pause");
    EXPECT_STREQ(stop["pou"].GetString(), "FastProg");
    EXPECT_FALSE(live.call("debug.continue", R"({"thread":2})").ok) << "the slow task is not halted";
    EXPECT_FALSE(live.call("debug.continue", R"({"thread":9})").ok);
}

TEST(ControlDebug, OneSessionDebugsAtATimeAndItsEndResumesItsTasks) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls), 1);
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    const ControlAnswer other = live.call("debug.setBreakpoints", lines(kLineTotal), 2);
    EXPECT_FALSE(other.ok);
    EXPECT_NE(other.message.find("another session"), std::string::npos);
    EXPECT_FALSE(live.call("debug.continue", R"({"thread":2})", 2).ok);
    // An online change waits for every task at its boundary: refused while one is halted.
    const ControlAnswer reload = live.call("bytecode.reload", R"({"bytes":"AAAA"})", 2);
    EXPECT_FALSE(reload.ok);
    EXPECT_NE(reload.message.find("halted in the debugger"), std::string::npos) << reload.message;

    live.control->sessionClosed(1); // its connection closed
    EXPECT_FALSE(live.result("debug.threads")["threads"][1]["halted"].GetBool());
    const std::int64_t slow = live.readInt("pSlow.cycles");
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    EXPECT_GT(live.readInt("pSlow.cycles"), slow + 2) << "no breakpoint left";
    // Now the other session may debug.
    EXPECT_TRUE(live.call("debug.setBreakpoints", lines(kLineTotal), 2).ok);
    EXPECT_EQ(live.nextStop()["line"].GetInt(), kLineTotal);
}

// debug.evaluate: an ST expression in the scope of the halted frame's POU, typed as IEC types
// combine, its value formatted as var.read formats it; a bad one is a coded error naming its
// column, and nothing is written.
TEST(ControlDebug, EvaluatesAnExpressionInTheHaltedFramesScope) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    const auto eval = [&live](const std::string& expression, int frame = 0) {
        return live.call("debug.evaluate",
                         R"({"thread":2,"frame":)" + std::to_string(frame) + R"(,"expression":")" + expression + "\"}");
    };
    const auto value = [&eval](const std::string& expression, int frame = 0) {
        const ControlAnswer a = eval(expression, frame);
        rapidjson::Document d;
        d.Parse(a.ok ? a.json.c_str() : "{}");
        EXPECT_TRUE(a.ok) << expression << ": " << a.message;
        return d.HasMember("value") ? std::string(d["value"].GetString()) + " : " + d["type"].GetString()
                                    : std::string();
    };
    // A local, an input, a member path from the caller's frame, a program's variable, a global.
    const std::int64_t calls = live.readInt("pSlow.acc.calls");
    EXPECT_EQ(value("calls"), std::to_string(calls) + " : DINT");
    EXPECT_EQ(value("x"), "1 : DINT");
    EXPECT_EQ(value("acc.x", 1), "1 : DINT");
    EXPECT_EQ(value("pSlow.i"), "1 : DINT");
    EXPECT_EQ(value("shared"), "7 : INT");
    // Arithmetic in IEC types: INT wraps at 16 bits, a literal takes its partner's type, / of
    // integers truncates, comparisons and AND give BOOL, REAL stays REAL.
    EXPECT_EQ(value("calls * 2 + x"), std::to_string(calls * 2 + 1) + " : DINT");
    EXPECT_EQ(value("shared * 10000"), "4464 : INT");
    EXPECT_EQ(value("-7 / 2"), "-3 : LINT");
    EXPECT_EQ(value("x = 1 AND shared > 5"), "TRUE : BOOL");
    EXPECT_EQ(value("NOT (x <> 1) XOR TRUE"), "FALSE : BOOL");
    EXPECT_EQ(value("shared MOD 4"), "3 : INT");
    EXPECT_EQ(value("x + 0.5"), "1.5 : LREAL");
    EXPECT_EQ(value("T#1s + T#500ms"), "T#1s500ms : TIME");
    // An FB instance is named by its type and expanded by its path.
    const ControlAnswer acc = eval("acc", 1);
    ASSERT_TRUE(acc.ok) << acc.message;
    rapidjson::Document d;
    d.Parse(acc.json.c_str());
    EXPECT_TRUE(d["expandable"].GetBool());
    EXPECT_STREQ(d["path"].GetString(), "pSlow.acc");
    EXPECT_STREQ(d["value"].GetString(), "Accum");
    // Bad expressions: a coded error naming the column; nothing runs, nothing is written.
    const auto error = [&eval](const std::string& expression) {
        const ControlAnswer a = eval(expression);
        EXPECT_FALSE(a.ok) << expression;
        return a.message;
    };
    EXPECT_NE(error("x +").find("at column 4"), std::string::npos) << error("x +");
    EXPECT_NE(error("x + nosuch").find("E0104 at column 5: no variable 'nosuch' in the scope of Accum"),
              std::string::npos)
        << error("x + nosuch");
    EXPECT_NE(error("calls := 5").find("E0011"), std::string::npos) << error("calls := 5");
    EXPECT_NE(error("pSlow.acc(x := 100)").find("E0801 at column 1"), std::string::npos)
        << error("pSlow.acc(x := 100)");
    EXPECT_NE(error("x AND 1.5").find("E0203"), std::string::npos) << error("x AND 1.5");
    EXPECT_NE(error("x / 0").find("division by zero"), std::string::npos) << error("x / 0");
    EXPECT_EQ(live.readInt("pSlow.acc.calls"), calls) << "nothing written";
    EXPECT_EQ(live.readInt("pSlow.acc.x"), 1) << "no FB called";
    // Without a thread: the globals only.
    rapidjson::Document g = live.result("debug.evaluate", R"({"expression":"shared + 1"})");
    EXPECT_STREQ(g["value"].GetString(), "8");
    EXPECT_FALSE(live.call("debug.evaluate", R"({"expression":"calls"})").ok);
}

// A hit condition (`5`, `>= 5`, `% 10`) is counted on the task's thread from when the breakpoint
// is set: `5` halts at the fifth hit only; a bad one leaves the breakpoint unverified, saying why.
TEST(ControlDebug, AHitConditionHaltsAtTheNthHitOnly) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line")); // halted before `calls := calls + 1`
    const std::int64_t calls = live.readInt("pSlow.acc.calls");
    rapidjson::Document b =
        live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"hitCondition":"5"}]})");
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool());
    live.result("debug.continue", R"({"thread":2})");
    rapidjson::Document stop = live.nextStop();
    ASSERT_EQ(stop["line"].GetInt(), kLineCalls);
    // The halted statement ran on, then hits 1 to 4 each counted one call.
    EXPECT_EQ(live.readInt("pSlow.acc.calls"), calls + 5);
    live.result("debug.continue", R"({"thread":2})");
    const std::int64_t cycles = live.readInt("pSlow.cycles");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (live.readInt("pSlow.cycles") < cycles + 5 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(live.readInt("pSlow.cycles"), cycles + 5) << "no halt after the fifth hit";
    live.pollEvents();
    EXPECT_EQ(live.stops.size(), live.stopsTaken);

    b = live.result("debug.setBreakpoints",
                    R"({"file":"src/main.st","breakpoints":[{"line":6,"hitCondition":"five"},{"line":7}]})");
    EXPECT_FALSE(b["breakpoints"][0]["verified"].GetBool());
    EXPECT_NE(std::string(b["breakpoints"][0]["reason"].GetString()).find("hit condition"), std::string::npos);
    EXPECT_TRUE(b["breakpoints"][1]["verified"].GetBool());
    EXPECT_EQ(live.nextStop()["line"].GetInt(), kLineTotal) << "only the valid breakpoint halts";
}

// A condition in the line's POU scope halts where it holds; one that does not compile is
// unverified with its code and column.
TEST(ControlDebug, AConditionHaltsWhereItHoldsAndABadOneSaysWhy) {
    Live live(kTwoTasks);
    live.result("debug.setBreakpoints", lines(kLineCalls));
    ASSERT_TRUE(live.nextStop().HasMember("line"));
    const std::int64_t calls = live.readInt("pSlow.acc.calls");
    rapidjson::Document b =
        live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"condition":"calls = )" +
                                                std::to_string(calls + 4) + R"( AND x = x"}]})");
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool());
    live.result("debug.continue", R"({"thread":2})");
    ASSERT_EQ(live.nextStop()["line"].GetInt(), kLineCalls);
    EXPECT_EQ(live.readInt("pSlow.acc.calls"), calls + 4);

    b = live.result("debug.setBreakpoints", R"({"file":"src/main.st","breakpoints":[{"line":6,"condition":"calls >"},)"
                                            R"({"line":7,"logMessage":"total {total"}]})");
    EXPECT_FALSE(b["breakpoints"][0]["verified"].GetBool());
    EXPECT_NE(std::string(b["breakpoints"][0]["reason"].GetString()).find("condition: E"), std::string::npos)
        << b["breakpoints"][0]["reason"].GetString();
    EXPECT_FALSE(b["breakpoints"][1]["verified"].GetBool());
    EXPECT_NE(std::string(b["breakpoints"][1]["reason"].GetString()).find("column 7 is not closed"), std::string::npos)
        << b["breakpoints"][1]["reason"].GetString();
    live.result("debug.continue", R"({"thread":2})");
}

// A logpoint does not halt: its values arrive as debug_output events, formatted off the task.
TEST(ControlDebug, ALogpointLogsWithoutHalting) {
    Live live(kTwoTasks);
    rapidjson::Document b =
        live.result("debug.setBreakpoints",
                    R"({"file":"src/main.st","breakpoints":[{"line":6,"logMessage":"x={x} odd={x MOD 2 = 1}"}]})");
    ASSERT_TRUE(b["breakpoints"][0]["verified"].GetBool());
    const std::int64_t cycles = live.readInt("pSlow.cycles");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (live.outputs.size() < 6 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        live.pollEvents();
    }
    ASSERT_GE(live.outputs.size(), 6u);
    const auto at = std::find(live.outputs.begin(), live.outputs.end(), "x=1 odd=TRUE");
    ASSERT_LE(at + 3, live.outputs.end()) << live.outputs.front();
    EXPECT_EQ(*(at + 1), "x=2 odd=FALSE");
    EXPECT_EQ(*(at + 2), "x=3 odd=TRUE");
    EXPECT_GT(live.readInt("pSlow.cycles"), cycles);
    EXPECT_TRUE(live.stops.empty()) << "a logpoint never halts";
}

// A function breakpoint halts at the first statement of the POU named (any case), in every
// instance, with a condition in the POU's scope; a name the program does not have says why.
TEST(ControlDebug, AFunctionBreakpointHaltsAtThePousFirstStatement) {
    Live live(kTwoTasks);
    rapidjson::Document b = live.result("debug.setFunctionBreakpoints",
                                        R"({"breakpoints":[{"name":"accum","condition":"x = 3"},{"name":"Nope"}]})");
    ASSERT_EQ(b["breakpoints"].Size(), 2u);
    EXPECT_TRUE(b["breakpoints"][0]["verified"].GetBool());
    EXPECT_STREQ(b["breakpoints"][0]["pou"].GetString(), "Accum");
    EXPECT_STREQ(b["breakpoints"][0]["file"].GetString(), "src/main.st");
    EXPECT_EQ(b["breakpoints"][0]["line"].GetInt(), kLineCalls);
    EXPECT_FALSE(b["breakpoints"][1]["verified"].GetBool());
    EXPECT_NE(std::string(b["breakpoints"][1]["reason"].GetString()).find("no POU named 'Nope'"), std::string::npos);
    rapidjson::Document stop = live.nextStop();
    EXPECT_EQ(stop["thread"].GetUint(), kSlowThread);
    EXPECT_STREQ(stop["reason"].GetString(), "breakpoint");
    EXPECT_STREQ(stop["pou"].GetString(), "Accum");
    EXPECT_EQ(stop["line"].GetInt(), kLineCalls);
    rapidjson::Document in = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"inputs"})");
    EXPECT_EQ(Live::valueOf(in, "x"), "3") << "the condition holds at the loop's third call only";
    // A line breakpoint set after it keeps it: both are the session's.
    live.result("debug.setBreakpoints", lines(kLineTotal));
    live.result("debug.continue", R"({"thread":2})");
    EXPECT_EQ(live.nextStop()["line"].GetInt(), kLineTotal);
    live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    live.result("debug.continue", R"({"thread":2})");
    stop = live.nextStop();
    EXPECT_EQ(stop["line"].GetInt(), kLineCalls);
    in = live.result("debug.variables", R"({"thread":2,"frame":0,"scope":"inputs"})");
    EXPECT_EQ(Live::valueOf(in, "x"), "3");
    live.result("debug.setFunctionBreakpoints", R"({"breakpoints":[]})");
    live.result("debug.continue", R"({"thread":2})");
    live.result("debug.detach");
}

// q := 100 / d on the base cycle once `armed`; line numbers as in kTwoTasks.
const char* const kDivide = R"(
PROGRAM Main
VAR d : DINT; armed : BOOL; q : DINT; runs : DINT; END_VAR
runs := runs + 1;
IF armed THEN
  q := 100 / d;
END_IF;
END_PROGRAM
)";
constexpr int kLineDivide = 6;

// An exception breakpoint halts the task at the faulting statement before the fault policy acts;
// a divisor written while halted lets the statement run again and the program on without a
// fault; continued unfixed, the fault policy acts as without a debugger.
TEST(ControlDebug, AnExceptionBreakpointHaltsBeforeTheFaultPolicyActs) {
    Live live(kDivide);
    const ControlAnswer bad = live.call("debug.setExceptionBreakpoints", R"({"filters":["division"]})");
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.message.find("no exception filter 'division'"), std::string::npos) << bad.message;
    rapidjson::Document f = live.result("debug.setExceptionBreakpoints", R"({"filters":["divide_by_zero"]})");
    ASSERT_EQ(f["filters"].Size(), 1u);
    EXPECT_TRUE(f["filters"][0]["verified"].GetBool());
    live.result("var.write", R"({"name":"Main.armed","value":"TRUE"})");
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["reason"].GetString(), "exception");
    EXPECT_EQ(stop["line"].GetInt(), kLineDivide);
    EXPECT_STREQ(stop["exception"].GetString(), "divide_by_zero");
    EXPECT_NE(std::string(stop["fault"].GetString()).find("division"), std::string::npos);
    rapidjson::Document t = live.result("debug.stackTrace", R"({"thread":1})");
    EXPECT_STREQ(t["reason"].GetString(), "exception");
    EXPECT_STREQ(t["exception"]["filter"].GetString(), "divide_by_zero");
    EXPECT_STREQ(t["exception"]["trap"].GetString(), "DivByZero");
    EXPECT_EQ(t["frames"][0]["line"].GetInt(), kLineDivide);
    EXPECT_EQ(live.result("runtime.status")["faults"].GetUint64(), 0u);

    live.result("var.write", R"({"name":"Main.d","value":"4"})"); // applied at once on the halted base cycle
    const std::int64_t runs = live.readInt("Main.runs");
    live.result("debug.continue", R"({"thread":1})");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (live.readInt("Main.runs") < runs + 5 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(live.readInt("Main.runs"), runs + 5);
    EXPECT_EQ(live.readInt("Main.q"), 25);
    rapidjson::Document s = live.result("runtime.status");
    EXPECT_STREQ(s["state"].GetString(), "running");
    EXPECT_EQ(s["faults"].GetUint64(), 0u);

    // Continued without a fix: the fault policy acts.
    live.result("var.write", R"({"name":"Main.d","value":"0"})");
    EXPECT_EQ(live.nextStop()["line"].GetInt(), kLineDivide);
    live.result("debug.continue", R"({"thread":1})");
    while (std::string(live.result("runtime.status")["state"].GetString()) != "faulted" &&
           std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    s = live.result("runtime.status");
    EXPECT_STREQ(s["state"].GetString(), "faulted");
    EXPECT_EQ(s["faults"].GetUint64(), 1u);
    EXPECT_NE(std::string(s["fault"]["message"].GetString()).find("division"), std::string::npos);
}

TEST(ControlDebug, ExceptionAndFunctionBreakpointsNeedEngineer) {
    for (const char* m : {"debug.setFunctionBreakpoints", "debug.setExceptionBreakpoints"}) {
        const ControlMethod* entry = rpc::findMethod(RuntimeControl::methodTable(), m);
        ASSERT_NE(entry, nullptr) << m;
        EXPECT_EQ(entry->role, Role::Engineer) << m;
    }
}

// docs/debugging.md's table of exception filters is vm::kExceptionFilters, row by row.
TEST(ControlDebug, TheDocsListEveryExceptionFilter) {
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/debugging.md");
    ASSERT_TRUE(in);
    std::stringstream text;
    text << in.rdbuf();
    std::size_t rows = 0;
    for (const vm::ExceptionFilter& f : vm::kExceptionFilters) {
        EXPECT_NE(text.str().find("| `" + std::string(f.id) + "` |"), std::string::npos) << f.id;
        ++rows;
    }
    // The rows after the table's header and its separator line.
    std::size_t documented = 0;
    std::istringstream lines(text.str().substr(text.str().find("| filter | the fault |")));
    std::string line;
    std::getline(lines, line);
    std::getline(lines, line);
    while (std::getline(lines, line) && line.starts_with("  | `")) {
        ++documented;
    }
    EXPECT_EQ(documented, rows) << "one row per filter, no more";
}

} // namespace
} // namespace takt::agent

namespace takt::agent {
namespace {

// Flow control on the FB the slow task calls three times a cycle, on one instance: the lines it
// ran with their counts and values, off again, and the mistakes named.
TEST(ControlDebug, FlowControlRecordsWhatEachLineReadAndWroteInTheLastRun) {
    Live live(kTwoTasks);
    EXPECT_EQ(live.call("debug.flowValues").code, rpc::kCommandFailed);
    const ControlAnswer unknown = live.call("debug.setFlow", R"({"pou":"Nope"})");
    EXPECT_EQ(unknown.code, -32602);
    EXPECT_NE(unknown.message.find("no POU named 'Nope'"), std::string::npos) << unknown.message;
    EXPECT_EQ(live.call("debug.setFlow", R"({"pou":"Accum","file":"src/main.st","line":6})").code, -32602);
    EXPECT_EQ(live.call("debug.setFlow", R"({"file":"src/main.st"})").code, -32602);
    const ControlAnswer wrong = live.call("debug.setFlow", R"({"pou":"Accum","instance":"pSlow.cycles"})");
    EXPECT_EQ(wrong.code, -32602);
    EXPECT_NE(wrong.message.find("not an instance of Accum"), std::string::npos) << wrong.message;
    EXPECT_EQ(live.call("debug.flowValues").code, rpc::kCommandFailed); // nothing was set

    rapidjson::Document on =
        live.result("debug.setFlow", R"({"file":"/home/me/project/src/main.st","line":7,"instance":"pSlow.acc"})");
    EXPECT_STREQ(on["pou"].GetString(), "Accum");
    EXPECT_EQ(rpc::toJson(on["lines"]), "[6,7]");
    const rapidjson::Document d = flowRecorded(live);
    ASSERT_GT(d["run"].GetUint64(), 0u);
    EXPECT_STREQ(d["task"].GetString(), "Slow");
    ASSERT_EQ(d["lines"].Size(), 2u);
    EXPECT_EQ(d["lines"][0]["line"].GetInt(), kLineCalls);
    EXPECT_EQ(d["lines"][0]["count"].GetInt(), 3);
    EXPECT_EQ(flowValue(d, kLineTotal, "x", "read"), 3);
    EXPECT_EQ(flowValue(d, kLineCalls, "calls", "write"), flowValue(d, kLineCalls, "calls", "read") + 1);

    EXPECT_TRUE(live.result("debug.setFlow")["pou"].IsNull());
    EXPECT_EQ(live.call("debug.flowValues").code, rpc::kCommandFailed);
    // The end of the session ends it too.
    live.result("debug.setFlow", R"({"pou":"SlowProg"})");
    EXPECT_TRUE(flowRecorded(live)["run"].GetUint64() > 0);
    live.result("debug.detach");
    EXPECT_EQ(live.call("debug.flowValues").code, rpc::kCommandFailed);
}

// An online change carries flow control to the POU of the same name in the new program, and ends
// it, saying why, when the new program has none.
TEST(ControlDebug, FlowControlFollowsThePouAcrossAnOnlineChange) {
    Live live(kOneTask);
    live.result("debug.setFlow", R"({"pou":"Count"})");
    ASSERT_GT(flowRecorded(live)["run"].GetUint64(), 0u);
    const std::string v2 = std::string(kOneTask).replace(std::string(kOneTask).find("n := n + 1;"), 11, "n := n + 2;");
    ASSERT_TRUE(live.call("bytecode.reload",
                          "{\"bytes\":\"" + detail::base64(debug_test::compileText(v2.c_str()).bytes) + "\"}")
                    .ok);
    rapidjson::Document d = flowRecorded(live);
    ASSERT_GT(d["run"].GetUint64(), 0u);
    EXPECT_EQ(flowValue(d, kLineCount, "n", "write"), flowValue(d, kLineCount, "n", "read") + 2);
    const char* const without = R"(
PROGRAM Main
VAR cnt : DINT; END_VAR
cnt := cnt + 1;
END_PROGRAM
)";
    ASSERT_TRUE(
        live.call("bytecode.reload", "{\"bytes\":\"" + detail::base64(debug_test::compileText(without).bytes) + "\"}")
            .ok);
    const ControlAnswer ended = live.call("debug.flowValues");
    EXPECT_EQ(ended.code, rpc::kCommandFailed);
    EXPECT_NE(ended.message.find("the online change ended flow control: no POU named 'Count'"), std::string::npos)
        << ended.message;
}

} // namespace
} // namespace takt::agent
