// Textual SFC (docs/language-notes.md "SFC"): charts compiled and run cycle by cycle on the
// virtual clock (1 ms per cycle, TIME() = the cycle's start), the values worked out by hand from
// the documented order: step times, then actions, then transitions (a step entered in a cycle
// runs its actions from the next cycle on).
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

constexpr std::int64_t kMs = 1'000'000;

TEST(Sfc, ASequenceStepsThroughItsTransitionsAndActions) {
    Runner r(R"(
PROGRAM Main
VAR start : BOOL; fills : INT; lamp : BOOL; END_VAR
    INITIAL_STEP Idle:
        lamp(N);
    END_STEP
    STEP Fill:
        Count(N);
    END_STEP
    STEP Done:
    END_STEP
    TRANSITION FROM Idle TO Fill := start; END_TRANSITION
    TRANSITION FROM Fill TO Done := Fill.T >= T#3ms; END_TRANSITION
    TRANSITION FROM Done TO Idle := NOT start; END_TRANSITION
    ACTION Count:
        fills := fills + 1;
    END_ACTION
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None); // t = 0
    EXPECT_TRUE(r.get<bool>("Main.Idle.X"));
    EXPECT_TRUE(r.get<bool>("Main.lamp"));
    r.set<bool>("Main.start", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None); // t = 1: Idle -> Fill at the cycle's end
    EXPECT_FALSE(r.get<bool>("Main.Idle.X"));
    EXPECT_TRUE(r.get<bool>("Main.Fill.X"));
    EXPECT_EQ(r.get<std::int16_t>("Main.fills"), 0);
    EXPECT_TRUE(r.get<bool>("Main.lamp")) << "assigned before the transition fired";
    const std::int16_t fills[] = {1, 2, 3, 4};
    const std::int64_t times[] = {0, 1, 2, 3};
    for (int k = 0; k < 4; ++k) { // t = 2..5
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_FALSE(r.get<bool>("Main.lamp")) << k;
        EXPECT_EQ(r.get<std::int16_t>("Main.fills"), fills[k]) << k;
        EXPECT_EQ(r.get<std::int64_t>("Main.Fill.T"), times[k] * kMs) << k;
    }
    EXPECT_TRUE(r.get<bool>("Main.Done.X"));
    EXPECT_FALSE(r.get<bool>("Main.Fill.X"));
    ASSERT_EQ(r.cycle(), vm::Trap::None); // Done waits for start to fall
    EXPECT_TRUE(r.get<bool>("Main.Done.X"));
    EXPECT_EQ(r.get<std::int16_t>("Main.fills"), 5) << "Count's final scan, in the cycle after Fill was left";
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.fills"), 5) << "one final scan only";
    EXPECT_EQ(r.get<std::int64_t>("Main.Fill.T"), 3 * kMs) << "T keeps its last value once left";
    r.set<bool>("Main.start", false);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.Idle.X"));
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.lamp"));
    EXPECT_EQ(r.get<std::int64_t>("Main.Idle.T"), 0) << "T restarts when the step is entered again";
}

// S stores until an R on another step, P runs once per activation (and once more, its final scan), L for a time from
// the step's activation, D after a time; the Boolean variables as actions show each cycle's result.
TEST(Sfc, QualifiersStoreResetPulseLimitAndDelay) {
    Runner r(R"(
PROGRAM Main
VAR go : BOOL; held : BOOL; pulse : BOOL; limited : BOOL; delayed : BOOL; pulses : INT; END_VAR
    INITIAL_STEP A:
        held(S);
        Once(P);
        limited(L, T#2ms);
        delayed(D, T#2ms);
    END_STEP
    STEP B:
        held(R);
    END_STEP
    TRANSITION FROM A TO B := go; END_TRANSITION
    TRANSITION FROM B TO A := NOT go; END_TRANSITION
    ACTION Once:
        pulses := pulses + 1;
    END_ACTION
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    // In A: T = 0, 1, 2, 3 ms.
    const bool lim[] = {true, true, false, false};
    const bool del[] = {false, false, true, true};
    const std::int16_t pulses[] = {1, 2, 2, 2}; // the pulse, then its final scan
    for (int k = 0; k < 4; ++k) {
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_TRUE(r.get<bool>("Main.held")) << k;
        EXPECT_EQ(r.get<bool>("Main.limited"), lim[k]) << k;
        EXPECT_EQ(r.get<bool>("Main.delayed"), del[k]) << k;
        EXPECT_EQ(r.get<std::int16_t>("Main.pulses"), pulses[k]) << k;
    }
    r.set<bool>("Main.go", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None); // A -> B
    EXPECT_TRUE(r.get<bool>("Main.held"));
    ASSERT_EQ(r.cycle(), vm::Trap::None); // B resets held
    EXPECT_FALSE(r.get<bool>("Main.held"));
    EXPECT_FALSE(r.get<bool>("Main.limited"));
    EXPECT_FALSE(r.get<bool>("Main.delayed"));
    r.set<bool>("Main.go", false);
    ASSERT_EQ(r.cycle(), vm::Trap::None); // B -> A
    ASSERT_EQ(r.cycle(), vm::Trap::None); // A again: stored again, pulsed again
    EXPECT_TRUE(r.get<bool>("Main.held"));
    EXPECT_EQ(r.get<std::int16_t>("Main.pulses"), 3);
    EXPECT_TRUE(r.get<bool>("Main.limited"));
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.pulses"), 4);
}

// Alternative divergence: the first transition declared wins when both are TRUE. Simultaneous
// divergence and convergence: (L1, R1) start together; the join waits for both branches.
TEST(Sfc, DivergenceAndConvergence) {
    Runner r(R"(
PROGRAM Main
VAR a : BOOL; b : BOOL; left : BOOL; right : BOOL; END_VAR
    INITIAL_STEP S0:
    END_STEP
    STEP Alt:
    END_STEP
    STEP L1:
    END_STEP
    STEP R1:
    END_STEP
    STEP L2:
    END_STEP
    TRANSITION FROM S0 TO (L1, R1) := a; END_TRANSITION
    TRANSITION FROM S0 TO Alt := b; END_TRANSITION
    TRANSITION FROM L1 TO L2 := left; END_TRANSITION
    TRANSITION FROM (L2, R1) TO S0 := right; END_TRANSITION
    TRANSITION FROM Alt TO S0 := TRUE; END_TRANSITION
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    r.set<bool>("Main.b", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.Alt.X"));
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.S0.X"));
    r.set<bool>("Main.a", true); // a and b both TRUE: the first declared fires, once
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_FALSE(r.get<bool>("Main.Alt.X"));
    EXPECT_TRUE(r.get<bool>("Main.L1.X"));
    EXPECT_TRUE(r.get<bool>("Main.R1.X"));
    EXPECT_FALSE(r.get<bool>("Main.S0.X"));
    r.set<bool>("Main.right", true); // the join needs L2 as well
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.R1.X"));
    r.set<bool>("Main.left", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None); // L1 -> L2
    EXPECT_TRUE(r.get<bool>("Main.L2.X"));
    EXPECT_TRUE(r.get<bool>("Main.R1.X"));
    ASSERT_EQ(r.cycle(), vm::Trap::None); // (L2, R1) -> S0
    EXPECT_FALSE(r.get<bool>("Main.L2.X"));
    EXPECT_FALSE(r.get<bool>("Main.R1.X"));
    EXPECT_TRUE(r.get<bool>("Main.S0.X"));
}

// Two exclusive steps each entering the same simultaneous divergence (a selection convergence
// right before it in CODESYS's drawing): whichever fires activates both branches.
TEST(Sfc, ExclusiveStepsEnterOneSimultaneousDivergence) {
    Runner r(R"(
PROGRAM Main
VAR a : BOOL; b : BOOL; go : BOOL; done : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    STEP FillA: END_STEP
    STEP FillB: END_STEP
    STEP Heat: END_STEP
    STEP Mix: END_STEP
    TRANSITION FROM Idle TO FillA := a; END_TRANSITION
    TRANSITION FROM Idle TO FillB := b; END_TRANSITION
    TRANSITION FROM FillA TO (Heat, Mix) := go; END_TRANSITION
    TRANSITION FROM FillB TO (Heat, Mix) := go; END_TRANSITION
    TRANSITION FROM (Heat, Mix) TO Idle := done; END_TRANSITION
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    for (const char* fill : {"FillA", "FillB"}) {
        r.set<bool>(fill == std::string_view("FillA") ? "Main.a" : "Main.b", true);
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_TRUE(r.get<bool>(std::string("Main.") + fill + ".X")) << fill;
        r.set<bool>("Main.a", false);
        r.set<bool>("Main.b", false);
        r.set<bool>("Main.go", true);
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_FALSE(r.get<bool>(std::string("Main.") + fill + ".X")) << fill;
        EXPECT_TRUE(r.get<bool>("Main.Heat.X")) << fill;
        EXPECT_TRUE(r.get<bool>("Main.Mix.X")) << fill;
        r.set<bool>("Main.go", false);
        r.set<bool>("Main.done", true);
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_FALSE(r.get<bool>("Main.Heat.X")) << fill;
        EXPECT_FALSE(r.get<bool>("Main.Mix.X")) << fill;
        EXPECT_TRUE(r.get<bool>("Main.Idle.X")) << fill;
        r.set<bool>("Main.done", false);
    }
}

// A chart in a FUNCTION_BLOCK: each instance has its own steps; the caller reads them.
TEST(Sfc, EachFbInstanceRunsItsOwnChart) {
    Runner r(R"(
FUNCTION_BLOCK Toggle
VAR_INPUT flip : BOOL; END_VAR
VAR_OUTPUT shine : BOOL; END_VAR
    INITIAL_STEP Off:
    END_STEP
    STEP Lit:
        shine(N);
    END_STEP
    TRANSITION FROM Off TO Lit := flip; END_TRANSITION
    TRANSITION FROM Lit TO Off := NOT flip; END_TRANSITION
END_FUNCTION_BLOCK
PROGRAM Main
VAR t1 : Toggle; t2 : Toggle; x : BOOL; seen : BOOL; END_VAR
    t1(flip := x);
    t2(flip := FALSE);
    seen := t1.Lit.X;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    r.set<bool>("Main.x", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.t1.shine"));
    EXPECT_TRUE(r.get<bool>("Main.seen"));
    EXPECT_FALSE(r.get<bool>("Main.t2.shine"));
    EXPECT_TRUE(r.get<bool>("Main.t2.Off.X"));
}

// PRIORITY orders only the transitions leaving the same step: here the PRIORITY 0 transition
// from B stays after t1 (from A), declared before it, so it reads t1 of this cycle; and the
// largest PRIORITY still comes before none.
TEST(Sfc, PriorityOrdersOnlyTheTransitionsOfOneStep) {
    Runner r(R"(
PROGRAM Main
VAR go : BOOL; END_VAR
    INITIAL_STEP S0: END_STEP
    STEP A: END_STEP
    STEP A2: END_STEP
    STEP B: END_STEP
    STEP B2: END_STEP
    STEP B3: END_STEP
    TRANSITION FROM S0 TO (A, B) := TRUE; END_TRANSITION
    TRANSITION t1 FROM A TO A2 := go; END_TRANSITION
    TRANSITION FROM B TO B3 := t1; END_TRANSITION
    TRANSITION (PRIORITY := 18446744073709551615) FROM B TO B2 := t1; END_TRANSITION
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None); // S0 -> A, B
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.B.X"));
    r.set<bool>("Main.go", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None); // t1 fires, and B's transitions read it in the same cycle
    EXPECT_TRUE(r.get<bool>("Main.A2.X"));
    EXPECT_TRUE(r.get<bool>("Main.B2.X")) << "the PRIORITY transition first, in t1's cycle";
    EXPECT_FALSE(r.get<bool>("Main.B3.X"));
}

// STEP, TRANSITION and FROM are not keywords: `Transition(Priority := 1);` calls an FB instance
// named Transition (only `TRANSITION (PRIORITY …) FROM` is SFC), and the statements after it run.
TEST(Sfc, AnInstanceNamedTransitionIsCalledAsBefore) {
    Runner r(R"(
FUNCTION_BLOCK Stage
VAR_INPUT Priority : INT; END_VAR
VAR_OUTPUT last : INT; END_VAR
    last := Priority;
END_FUNCTION_BLOCK
PROGRAM Main
VAR Transition : Stage; step : INT; from : INT; after : INT; END_VAR
    Transition(Priority := 1);
    step := Transition.last;
    Transition(Priority := (step + 1) * 2);
    from := Transition.last;
    after := after + 1;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.step"), 1);
    EXPECT_EQ(r.get<std::int16_t>("Main.from"), 4);
    EXPECT_EQ(r.get<std::int16_t>("Main.after"), 1);
}

} // namespace
} // namespace takt::compiler
