// The debugger on a program the native tier compiled: while the session holds a breakpoint, an
// exception filter, a step or a pause, the tasks run the program on the interpreter (on the same
// image, so every variable and FB instance carries across), and native again once it does not.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "debug_live.h"
#include "takt/native/native.h"

namespace takt::agent {
namespace {

using debug_test::lines;
using debug_test::Live;

// `cnt` and the FB's `n` count the same cycles and `t` pulses every few cycles: a cycle that lost
// or repeated an FB's state on a change of tier would make `lag` non-zero or stop the pulses.
const char* const kCounting = R"(
FUNCTION_BLOCK Count
  VAR_OUTPUT n : DINT; END_VAR
  n := n + 1;
END_FUNCTION_BLOCK

PROGRAM Main
VAR cnt : DINT; c : Count; lag : DINT; t : TON; pulses : DINT; END_VAR
cnt := cnt + 1;
c();
lag := cnt - c.n;
t(IN := NOT t.Q, PT := T#4ms);
IF t.Q THEN pulses := pulses + 1; END_IF;
END_PROGRAM
)";
constexpr int kLineCnt = 9;

std::string execution(Live& live) {
    const rapidjson::Document s = live.result("runtime.status");
    return s.HasMember("execution") ? s["execution"].GetString() : std::string();
}

// Polls `done` every 2 ms for up to 10 s.
template <typename Done> bool within10s(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return done();
}

// A line breakpoint halts the natively compiled program at its line; continued, it halts there
// in the next cycle with every counter one further; with the breakpoints cleared the cycles run
// native again, and the FB's count and the TON's pulses went on across both changes of tier.
TEST(ControlDebugNative, ABreakpointHaltsANativeProgramWhichRunsNativeAgainWhenCleared) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier: " << native::unavailableReason();
    }
    Live live(kCounting, true, engine::Execution::Native);
    ASSERT_EQ(live.runner->executionStatus(), "native");
    ASSERT_TRUE(within10s([&] { return live.readInt("Main.cnt") > 10; }));
    EXPECT_EQ(execution(live), "native");
    EXPECT_EQ(live.runner->debugInterpretedRuns(), 0u) << "no session: every cycle native";

    rapidjson::Document d = live.result("debug.setBreakpoints", lines(kLineCnt));
    ASSERT_TRUE(d.HasMember("breakpoints"));
    ASSERT_TRUE(d["breakpoints"][0]["verified"].GetBool()) << d["breakpoints"][0]["reason"].GetString();
    rapidjson::Document stop = live.nextStop();
    ASSERT_EQ(stop["line"].GetInt(), kLineCnt);
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    EXPECT_EQ(execution(live), "native (interpreter while debugging)");
    EXPECT_GT(live.runner->debugInterpretedRuns(), 0u);

    // Halted before `cnt := cnt + 1`: the native cycles' values, readable and consistent.
    const std::int64_t cnt = live.readInt("Main.cnt");
    const std::int64_t pulses = live.readInt("Main.pulses");
    EXPECT_GT(cnt, 10);
    EXPECT_EQ(live.readInt("Main.c.n"), cnt);
    EXPECT_GT(pulses, 0) << "the TON pulsed on the native tier";
    const rapidjson::Document locals = live.result("debug.variables", R"({"thread":1,"frame":0,"scope":"locals"})");
    EXPECT_EQ(Live::valueOf(locals, "cnt"), std::to_string(cnt));

    live.result("debug.continue", R"({"thread":1})");
    stop = live.nextStop();
    EXPECT_EQ(stop["line"].GetInt(), kLineCnt);
    EXPECT_EQ(live.readInt("Main.cnt"), cnt + 1) << "one interpreted cycle on from the native ones";
    EXPECT_EQ(live.readInt("Main.c.n"), cnt + 1);
    EXPECT_EQ(live.readInt("Main.lag"), 0);

    // Cleared: still halted (so still interpreting) until continued, then native again.
    d = live.result("debug.setBreakpoints", R"({"file":"src/main.st","lines":[]})");
    EXPECT_EQ(execution(live), "native (interpreter while debugging)") << "halted";
    live.result("debug.continue", R"({"thread":1})");
    EXPECT_EQ(execution(live), "native");
    ASSERT_TRUE(within10s([&] { return live.readInt("Main.cnt") > cnt + 5; }));
    const std::uint64_t interpreted = live.runner->debugInterpretedRuns();
    const std::int64_t before = live.readInt("Main.cnt");
    ASSERT_TRUE(within10s([&] { return live.readInt("Main.cnt") > before + 20; }));
    EXPECT_EQ(live.runner->debugInterpretedRuns(), interpreted) << "the cycles run native again";
    EXPECT_EQ(live.readInt("Main.lag"), 0);
    EXPECT_GT(live.readInt("Main.pulses"), pulses) << "the TON went on pulsing across the changes";
    EXPECT_TRUE(live.stops.size() == live.stopsTaken) << "no halt after the breakpoints were cleared";
    live.result("debug.detach");
    EXPECT_EQ(execution(live), "native");
}

// A pause halts a native program at its next statement; an exception filter interprets the
// program while it is on, so a division by zero halts before the fault policy acts; detaching
// ends both and the program runs native again.
TEST(ControlDebugNative, APauseAndAnExceptionFilterHaltANativeProgram) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier: " << native::unavailableReason();
    }
    Live live(R"(
PROGRAM Main
VAR d : DINT; armed : BOOL; q : DINT; runs : DINT; END_VAR
runs := runs + 1;
IF armed THEN
  q := 100 / d;
END_IF;
END_PROGRAM
)",
              true, engine::Execution::Native);
    ASSERT_EQ(live.runner->executionStatus(), "native");
    live.result("debug.pause", R"({"thread":1})");
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["reason"].GetString(), "pause");
    EXPECT_STREQ(stop["pou"].GetString(), "Main");
    live.result("debug.continue", R"({"thread":1})");
    EXPECT_EQ(execution(live), "native");

    rapidjson::Document f = live.result("debug.setExceptionBreakpoints", R"({"filters":["divide_by_zero"]})");
    ASSERT_EQ(f["filters"].Size(), 1u);
    EXPECT_TRUE(f["filters"][0]["verified"].GetBool());
    EXPECT_EQ(execution(live), "native (interpreter while debugging)");
    live.result("var.write", R"({"name":"Main.armed","value":"TRUE"})");
    stop = live.nextStop();
    EXPECT_STREQ(stop["reason"].GetString(), "exception");
    EXPECT_EQ(stop["line"].GetInt(), 6);
    EXPECT_EQ(live.result("runtime.status")["faults"].GetUint64(), 0u);
    live.result("var.write", R"({"name":"Main.d","value":"4"})");
    live.result("debug.detach");
    const std::int64_t runs = live.readInt("Main.runs");
    ASSERT_TRUE(within10s([&] { return live.readInt("Main.runs") > runs + 5; }));
    EXPECT_EQ(live.readInt("Main.q"), 25);
    EXPECT_EQ(execution(live), "native");
    const std::uint64_t interpreted = live.runner->debugInterpretedRuns();
    ASSERT_TRUE(within10s([&] { return live.readInt("Main.runs") > runs + 20; }));
    EXPECT_EQ(live.runner->debugInterpretedRuns(), interpreted);
}

// Tasks on threads of their own: a breakpoint in an FB halts the task that calls it, which
// compiled natively like the others, and the session's end lets every task run native again.
TEST(ControlDebugNative, ATaskOnItsOwnThreadHaltsInAnFb) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier: " << native::unavailableReason();
    }
    Live live(R"(
FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM SlowProg
  VAR acc : Accum; cycles : DINT; lag : DINT; END_VAR
  acc(x := 1);
  cycles := cycles + 1;
  lag := cycles - acc.total;
END_PROGRAM

PROGRAM FastProg
  VAR cycles : DINT; END_VAR
  cycles := cycles + 1;
END_PROGRAM

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#10ms, PRIORITY := 2);
    PROGRAM pFast WITH Fast : FastProg;
    PROGRAM pSlow WITH Slow : SlowProg;
  END_RESOURCE
END_CONFIGURATION
)",
              true, engine::Execution::Native);
    ASSERT_EQ(live.runner->executionStatus(), "native");
    rapidjson::Document d = live.result("debug.setBreakpoints", lines(5));
    ASSERT_TRUE(d["breakpoints"][0]["verified"].GetBool()) << d["breakpoints"][0]["reason"].GetString();
    rapidjson::Document stop = live.nextStop();
    EXPECT_STREQ(stop["task"].GetString(), "Slow");
    EXPECT_STREQ(stop["pou"].GetString(), "Accum");
    const std::int64_t total = live.readInt("pSlow.acc.total");
    EXPECT_EQ(live.readInt("pSlow.cycles"), total) << "the native cycles' state";
    live.result("debug.continue", R"({"thread":2})");
    stop = live.nextStop();
    EXPECT_EQ(live.readInt("pSlow.acc.total"), total + 1);
    live.result("debug.detach");
    EXPECT_EQ(execution(live), "native");
    const std::int64_t fast = live.readInt("pFast.cycles");
    ASSERT_TRUE(within10s([&] { return live.readInt("pSlow.cycles") > total + 5; }));
    EXPECT_GT(live.readInt("pFast.cycles"), fast);
    EXPECT_EQ(live.readInt("pSlow.lag"), 0);
}

} // namespace
} // namespace takt::agent
