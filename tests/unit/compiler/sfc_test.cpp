// Textual SFC in the front end: what a chart that cannot run reports (E0025), what takt does not
// compile (E0020), the qualifiers' times, transition names and bodies, and that a sound chart checks clean with its
// steps as variables.
#include <string>

#include <gtest/gtest.h>

#include "takt/compiler/project.h"

namespace takt::compiler {
namespace {

std::string codes(const std::string& text) {
    Project p = checkSources({{"main.st", text}}, BuildOptions{});
    std::string out;
    for (const Diagnostic& d : p.diagnostics) {
        const LineCol lc = p.sources->lineCol(d.span);
        out += (out.empty() ? "" : " ") + std::string(diagInfo(d.code).code) + "@" + std::to_string(lc.line) + ":" +
               std::to_string(lc.column);
    }
    return out;
}

TEST(Sfc, ASoundChartChecksCleanAndItsStepsAreVariables) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR go : BOOL; lamp : BOOL; since : TIME; active : BOOL; step : INT; END_VAR
    INITIAL_STEP Idle:
        lamp(N);
    END_STEP
    STEP Run:
        Work(S);
    END_STEP
    TRANSITION FROM Idle TO Run := go AND Idle.T > T#1s; END_TRANSITION
    TRANSITION FROM Run TO Idle := NOT go; END_TRANSITION
    ACTION Work:
        since := Run.T;
        active := Run.X;
        step := step + 1;
    END_ACTION
END_PROGRAM
)"),
              "");
}

TEST(Sfc, ChartsThatCannotRunAreE0025) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S0:
        a(L);
    END_STEP
    INITIAL_STEP S1:
        a(N, T#1s);
        a(Q);
    END_STEP
    STEP S0:
    END_STEP
    TRANSITION FROM S0 TO Nowhere := TRUE; END_TRANSITION
END_PROGRAM
)"),
              // `a`, a Boolean action of the chart, is used though the chart is not compiled (no W0001)
              "E0025@4:9 E0025@6:18 E0025@7:9 E0025@8:11 E0025@10:10 E0025@12:27");
    EXPECT_EQ(codes(R"(FUNCTION_BLOCK Fb
    STEP S0:
    END_STEP
END_FUNCTION_BLOCK
)"),
              "E0025@2:10");
}

TEST(Sfc, TransitionNamesAndBodies) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S0:
        a(N);
    END_STEP
    STEP S1:
    END_STEP
    TRANSITION Go FROM S0 TO S1 :
        IF a THEN Go := TRUE; ELSE Go := FALSE; END_IF
    END_TRANSITION
    TRANSITION Back FROM S1 TO S0 := Go OR NOT a; END_TRANSITION
END_PROGRAM
)"),
              "");
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S0:
        a(N);
    END_STEP
    TRANSITION FROM S0 TO S0 : a := TRUE; END_TRANSITION
    TRANSITION T1 FROM S0 TO S0 := a; END_TRANSITION
    TRANSITION T1 FROM S0 TO S0 := a; END_TRANSITION
    TRANSITION S0 FROM S0 TO S0 := a; END_TRANSITION
    TRANSITION T2 FROM S0 TO S0 :
        IF a THEN RETURN; END_IF
        T2 := TRUE;
    END_TRANSITION
END_PROGRAM
)"),
              // a body without a name, a name twice, a step's name, RETURN in a body
              "E0025@6:5 E0025@8:16 E0025@9:16 E0025@11:19");
    // An SFC element inside a transition's body is inside a statement.
    EXPECT_EQ(codes(R"(PROGRAM Main
    INITIAL_STEP S0:
    END_STEP
    TRANSITION T FROM S0 TO S0 :
        STEP S1: END_STEP
        T := TRUE;
    END_TRANSITION
END_PROGRAM
)"),
              "E0020@5:9");
}

TEST(Sfc, TimedQualifiersNeedTheirTimeAndOneStoreEach) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; b : BOOL; END_VAR
    INITIAL_STEP S0:
        a(SD, T#1s);
        b(P0);
        b(P1);
        a(DS);
    END_STEP
    STEP S1:
        a(SD, T#2s);
        a(SL, T#1s);
        b(P0, T#1s);
    END_STEP
    TRANSITION FROM S0 TO S1 := TRUE; END_TRANSITION
END_PROGRAM
)"),
              // DS without a time, a second SD of one action, P0 with a time
              "E0025@7:9 E0025@10:9 E0025@12:9");
}

// IEC 61131-3's `(PRIORITY := n)` after the transition's name: a number; anything else is E0025,
// a missing `:=` a syntax error.
TEST(Sfc, ATransitionsPriorityIsANumber) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR n : INT; END_VAR
    INITIAL_STEP S0: END_STEP
    STEP S1: END_STEP
    TRANSITION (PRIORITY := 2) FROM S0 TO S1 := n > 0; END_TRANSITION
    TRANSITION Back (PRIORITY := 0) FROM S1 TO S0 := n = 0; END_TRANSITION
    TRANSITION (PRIORITY := n) FROM S0 TO S0 := n < 0; END_TRANSITION
    TRANSITION (PRIORITY := -1) FROM S1 TO S1 := n > 5; END_TRANSITION
    TRANSITION (PRIORITY 1) FROM S1 TO S1 := n > 9; END_TRANSITION
END_PROGRAM
)"),
              "E0025@7:29 E0025@8:29 E0010@9:26");
}

// An ACTION's control outputs Q and A are read-only, and only an action the chart associates has them.
TEST(Sfc, AnActionsQIsReadOnlyAndOnlyForChartActions) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR lit : BOOL; END_VAR
    lit := Work.Q OR Work.a;
    Work.Q := TRUE;
    lit := Spare.Q;
    INITIAL_STEP S0: Work(N); END_STEP
    TRANSITION FROM S0 TO S0 := lit; END_TRANSITION
    ACTION Work: lit := NOT lit; END_ACTION
    ACTION Spare: lit := FALSE; END_ACTION
END_PROGRAM
)"),
              "E0403@4:5 E0105@5:18");
}

// Inside the action itself too: `Work.Q := …`, REF(Work.Q), ADR(Work.A), a VAR_IN_OUT or an
// output (=>) given Work.A would write the chart's flag; each is E0403.
TEST(Sfc, AnActionsQAndAAreReadOnlyInsideTheAction) {
    EXPECT_EQ(codes(R"(FUNCTION_BLOCK Flip
VAR_IN_OUT x : BOOL; END_VAR
VAR_OUTPUT y : BOOL; END_VAR
    x := NOT x;
END_FUNCTION_BLOCK
PROGRAM Main
VAR lit : BOOL; r : REF_TO BOOL; f : Flip; END_VAR
    INITIAL_STEP S0: Work(N); END_STEP
    TRANSITION FROM S0 TO S0 := lit; END_TRANSITION
    ACTION Work:
        Work.Q := FALSE;
        (Work.A) := FALSE;
        r := REF(Work.Q);
        f(x := Work.A, y => Work.Q);
        lit := Work.Q AND r^ AND ADR(Work.A) <> 0;
    END_ACTION
END_PROGRAM
)"),
              "E0403@11:9 E0403@12:9 E0403@13:18 E0403@14:16 E0403@14:29 E0403@15:38");
}

// A chart with an error (E0025) is not lowered, but its ACTIONs' Q and A stay what they are: read
// without a follow-on E0105, written with E0403.
TEST(Sfc, AnActionsQInAChartWithAnErrorIsNoFollowOnError) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR lit : BOOL; END_VAR
    lit := Work.Q OR Work.A OR Spare.Q;
    Work.A := TRUE;
    INITIAL_STEP S0: Work(N); END_STEP
    TRANSITION FROM S0 TO Nowhere := lit; END_TRANSITION
    ACTION Work: lit := NOT lit; END_ACTION
    ACTION Spare: lit := FALSE; END_ACTION
END_PROGRAM
)"),
              "E0105@3:38 E0403@4:5 E0025@6:27"); // Spare, which no step associates, has no Q
}

// An action's Q or A as the target of ENO => (as an imported LD or FBD network binds a block's
// ENO) is a write like any other: E0403, not E0304.
TEST(Sfc, AnActionsQAsEnoTargetIsReadOnly) {
    EXPECT_EQ(codes(R"(FUNCTION Twice : INT
VAR_INPUT a : INT; END_VAR
    Twice := a * 2;
END_FUNCTION
PROGRAM Main
VAR lit : BOOL; i : INT; END_VAR
    i := Twice(EN := lit, a := i, ENO => Work.Q);
    i := ADD(EN := lit, IN1 := i, IN2 := 1, ENO => Work.A);
    INITIAL_STEP S0: Work(N); END_STEP
    TRANSITION FROM S0 TO S0 := lit; END_TRANSITION
    ACTION Work: lit := NOT lit; END_ACTION
END_PROGRAM
)"),
              "E0403@7:42 E0403@8:52");
}

// A step that waits one cycle (`:= TRUE`) is ordinary SFC: no W0005 about a constant condition.
TEST(Sfc, ATransitionThatIsAlwaysTrueDoesNotWarn) {
    EXPECT_EQ(codes(R"(PROGRAM Main
    INITIAL_STEP S0:
    END_STEP
    STEP S1:
    END_STEP
    TRANSITION FROM S0 TO S1 := TRUE; END_TRANSITION
    TRANSITION FROM S1 TO S0 := TRUE; END_TRANSITION
END_PROGRAM
)"),
              "");
}

// IEC 61131-3's safe charts: nested simultaneous branches, each closed by its own convergence,
// with loops inside a branch, check clean; a jump out of a branch, and a convergence of steps that
// are not the branches of one divergence, are E0025.
TEST(Sfc, UnsafeChartsAreE0025) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S0: END_STEP
    STEP L1: END_STEP
    STEP L2: END_STEP
    STEP R1: END_STEP
    STEP R2: END_STEP
    STEP R3: END_STEP
    STEP R4: END_STEP
    STEP Join: END_STEP
    TRANSITION FROM S0 TO (L1, R1) := a; END_TRANSITION
    TRANSITION FROM L1 TO L2 := a; END_TRANSITION
    TRANSITION FROM L2 TO L1 := NOT a; END_TRANSITION
    TRANSITION FROM R1 TO (R2, R3) := a; END_TRANSITION
    TRANSITION FROM (R2, R3) TO R4 := a; END_TRANSITION
    TRANSITION FROM (L2, R4) TO Join := a; END_TRANSITION
    TRANSITION FROM Join TO S0 := a; END_TRANSITION
END_PROGRAM
)"),
              "");
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S0: END_STEP
    STEP L1: END_STEP
    STEP R1: END_STEP
    STEP Out: END_STEP
    TRANSITION FROM S0 TO (L1, R1) := a; END_TRANSITION
    TRANSITION FROM (L1, R1) TO S0 := a; END_TRANSITION
    TRANSITION FROM L1 TO S0 := a; END_TRANSITION
    TRANSITION FROM S0 TO Out := a; END_TRANSITION
    TRANSITION FROM (Out, R1) TO S0 := a; END_TRANSITION
END_PROGRAM
)"),
              // the jump from L1 back to S0, and Out (outside) joined with R1 (inside)
              "E0025@9:27 E0025@11:5");
}

// A chart with an error is not lowered, but what the rest of the POU sees of it stays: its steps
// (Heat.X read in an action), its named transitions, the variables its conditions, durations and
// Boolean actions use (no W0001). The one error is the one to fix.
TEST(Sfc, AChartWithAnErrorBringsNoFollowOnDiagnostics) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR go : BOOL; level : INT; lamp : BOOL; mixTime : TIME; heating : BOOL; SFCPause : BOOL; END_VAR
    INITIAL_STEP Idle: lamp(N); END_STEP
    STEP Heat: Watch(N); Mixer(L, mixTime); END_STEP
    TRANSITION FROM Idle TO Heat := go; END_TRANSITION
    TRANSITION Full FROM Heat TO Drain : Full := level > 100; END_TRANSITION
    ACTION Watch: heating := Heat.X AND NOT Full; END_ACTION
    ACTION Mixer: heating := FALSE; END_ACTION
END_PROGRAM
)"),
              "E0025@6:34");
    // An error inside a refused chart's condition is still reported, as it would be once the chart is fixed.
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR go : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    TRANSITION FROM Idle TO Nowhere := gone; END_TRANSITION
END_PROGRAM
)"),
              "W0001@2:5 E0025@4:29 E0104@4:40");
}

// Exclusive steps may each enter the same simultaneous divergence (CODESYS draws a selection
// convergence right before it): both transitions open one divergence, which one convergence closes.
TEST(Sfc, ExclusiveStepsMayEnterOneSimultaneousDivergence) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; b : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    STEP FillA: END_STEP
    STEP FillB: END_STEP
    STEP Heat: END_STEP
    STEP Mix: END_STEP
    TRANSITION FROM Idle TO FillA := a; END_TRANSITION
    TRANSITION FROM Idle TO FillB := b; END_TRANSITION
    TRANSITION FROM FillA TO (Heat, Mix) := a; END_TRANSITION
    TRANSITION FROM FillB TO (Mix, Heat) := b; END_TRANSITION
    TRANSITION FROM (Heat, Mix) TO Idle := NOT a AND NOT b; END_TRANSITION
END_PROGRAM
)"),
              "");
    // Entering only some of its steps is still no safe chart.
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; b : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    STEP FillA: END_STEP
    STEP Heat: END_STEP
    STEP Mix: END_STEP
    STEP Cool: END_STEP
    TRANSITION FROM Idle TO FillA := a; END_TRANSITION
    TRANSITION FROM FillA TO (Heat, Mix) := a; END_TRANSITION
    TRANSITION FROM Idle TO (Heat, Cool) := b; END_TRANSITION
    TRANSITION FROM (Heat, Mix) TO Idle := NOT a; END_TRANSITION
    TRANSITION FROM Cool TO Idle := NOT b; END_TRANSITION
END_PROGRAM
)"),
              "E0025@10:30 E0025@12:29");
}

// A name missing after FROM or TO (a syntax error) and a step named twice in one list refuse the
// chart: no crash, no unsafe chart accepted.
TEST(Sfc, ATransitionsListsNameEachStepOnce) {
    const std::string missing = codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP S1: END_STEP
    TRANSITION FROM S1 TO := a; END_TRANSITION
END_PROGRAM
)");
    EXPECT_EQ(missing.find("E0025"), std::string::npos) << missing;
    EXPECT_NE(missing.find("@4:27"), std::string::npos) << "the syntax error where the name is missing: " << missing;
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    STEP Heat: END_STEP
    STEP Done: END_STEP
    TRANSITION FROM Idle TO (Heat, heat) := a; END_TRANSITION
    TRANSITION FROM Heat TO Done := a; END_TRANSITION
    TRANSITION FROM Done TO Idle := a; END_TRANSITION
END_PROGRAM
)"),
              "E0025@6:36");
}

// An unsafe chart's message names the whole nesting of branches on each side, so that two
// places that differ only further out still read differently.
TEST(Sfc, AnUnsafeChartsMessageNamesTheWholeNesting) {
    const Project p = checkSources({{"main.st", R"(PROGRAM Main
VAR a : BOOL; END_VAR
    INITIAL_STEP Idle: END_STEP
    STEP FillA: END_STEP
    STEP FillB: END_STEP
    STEP Heat: END_STEP
    STEP Mix: END_STEP
    TRANSITION FROM Idle TO (FillA, FillB) := a; END_TRANSITION
    TRANSITION FROM FillA TO (Heat, Mix) := a; END_TRANSITION
    TRANSITION FROM FillB TO (Heat, Mix) := a; END_TRANSITION
    TRANSITION FROM (Heat, Mix) TO Idle := a; END_TRANSITION
END_PROGRAM
)"}},
                                   BuildOptions{});
    ASSERT_FALSE(p.diagnostics.empty());
    EXPECT_EQ(p.diagnostics[0].message,
              "step 'Heat' lies in the branch of 'Heat' of the simultaneous divergence into (Heat, Mix), inside the "
              "branch of 'FillA' of the simultaneous divergence into (FillA, FillB), but this transition would put "
              "it in the branch of 'Heat' of the simultaneous divergence into (Heat, Mix), inside the branch of "
              "'FillB' of the simultaneous divergence into (FillA, FillB): a transition may enter a simultaneous "
              "branch only through the divergence that opens it and leave it only through the convergence that "
              "closes it (IEC 61131-3 requires a safe chart)");
}

// CODESYS's implicit flags are honoured when declared, and only as BOOL.
TEST(Sfc, ChartFlagsAreBool) {
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR SFCInit : BOOL; sfcreset : BOOL; SFCPause : BOOL; END_VAR
    INITIAL_STEP S0:
    END_STEP
END_PROGRAM
)"),
              "");
    EXPECT_EQ(codes(R"(PROGRAM Main
VAR SFCInit : INT; END_VAR
    INITIAL_STEP S0:
    END_STEP
END_PROGRAM
)"),
              "E0025@2:5");
    EXPECT_EQ(codes(R"(FUNCTION_BLOCK Fb
VAR CONSTANT SFCInit : INT := 0; END_VAR
VAR_INPUT SFCPause : INT; END_VAR
    INITIAL_STEP S0:
    END_STEP
END_FUNCTION_BLOCK
)"),
              // no write to a constant or an input besides (a constant nothing reads keeps its W0001)
              "E0025@2:14 W0001@2:14 E0025@3:11");
}

TEST(Sfc, AnUnknownActionIsAnUnknownName) {
    EXPECT_EQ(codes(R"(PROGRAM Main
    INITIAL_STEP S0:
        Missing(N);
    END_STEP
END_PROGRAM
)"),
              "E0104@3:9");
}

} // namespace
} // namespace takt::compiler
