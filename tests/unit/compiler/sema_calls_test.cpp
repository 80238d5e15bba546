// Calls of FUNCTIONs, FB instances, METHODs, PROGRAMs and standard functions.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

const std::string kDecls = R"(FUNCTION Scale : INT
VAR_INPUT
    x : INT;
    k : INT;
END_VAR
    Scale := x * k;
END_FUNCTION
FUNCTION_BLOCK Acc
VAR_INPUT
    inc : INT;
END_VAR
VAR_IN_OUT
    total : DINT;
END_VAR
VAR_OUTPUT
    done : BOOL;
END_VAR
    total := total + inc;
END_FUNCTION_BLOCK
)"; // 19 lines

TEST(SemaCalls, FunctionsAndFbInstances) {
    Analysis a(kDecls + R"(PROGRAM Main
VAR
    i : INT;
    sum : DINT;
    ok : BOOL;
    acc : Acc;
    t : TON;
END_VAR
    i := Scale(2, 3);
    i := Scale(k := 2, x := i);
    acc(inc := 1, total := sum, done => ok);
    ok := acc.done;
    acc.inc := 5;
    acc(total := sum);
    t(IN := ok, PT := T#1s);
    ok := t.Q;
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "") << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "INT");
}

TEST(SemaCalls, ArgumentErrors) {
    EXPECT_EQ(diagsOf(kDecls + R"(PROGRAM Main
VAR
    i : INT;
    sum : DINT;
    ok : BOOL;
    acc : Acc;
END_VAR
    i := Scale(1, 2, 3);
    i := Scale(x := 1, y := 2);
    i := Scale(x := 1, 2);
    i := Scale(x := 1, x := 2);
    acc(inc := 1, total := sum, done => 5);
    acc(inc := 1);
    acc(total := sum, done := ok);
    acc(inc => i, total := sum);
    acc(inc := 1, total := 4);
END_PROGRAM
)"),
              "E0301@27:22 E0302@28:24 E0303@29:24 E0307@30:24 E0304@31:41 E0308@32:5 E0309@33:23 E0309@34:9 "
              "E0304@35:28");
}

TEST(SemaCalls, PositionalFunctionCallNeedsEveryInput) {
    EXPECT_EQ(diagsOf(kDecls + R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    i := Scale(1);
END_PROGRAM
)"),
              "E0301@24:10");
}

// A call passing only EN is a formal call (OpenPLC and CODESYS programs write `F(EN := TRUE)`):
// the inputs keep their initial values. A positional argument after EN is still mixed, a
// standard function still needs its inputs and an FB still its VAR_IN_OUT.
TEST(SemaCalls, CallWithOnlyEnIsFormal) {
    EXPECT_EQ(diagsOf(kDecls + R"(PROGRAM Main
VAR
    i : INT;
    ok : BOOL;
    sum : DINT;
    acc : Acc;
    r : REAL;
END_VAR
    i := Scale(EN := ok);
    i := Scale(EN := TRUE, ENO => ok);
    Scale(ENO => ok);
    i := Scale(EN := ok, 2, 3);
    r := SQRT(EN := ok);
    acc(EN := ok);
    acc(EN := ok, total := sum);
END_PROGRAM
)"),
              "E0303@31:26 E0303@31:29 E0301@32:10 E0308@33:5");
}

TEST(SemaCalls, ArgumentTypesAreConverted) {
    EXPECT_EQ(diagsOf(kDecls + R"(PROGRAM Main
VAR
    i : INT;
    d : DINT;
END_VAR
    i := Scale(d, 70000);
END_PROGRAM
)"),
              "W1010@25:16 E0504@25:19"); // DINT into INT narrows implicitly (CODESYS dialect)
}

TEST(SemaCalls, NonCallablesAndValuelessCalls) {
    EXPECT_EQ(diagsOf(R"(FUNCTION Notify
VAR_INPUT
    x : INT;
END_VAR
END_FUNCTION
FUNCTION_BLOCK Fb
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    i : INT;
    fb1 : Fb;
END_VAR
    i(1);
    Fb();
    i := Notify(1);
    Notify(2);
    i := fb1();
    nothing();
END_PROGRAM
)"),
              "E0305@13:5 E0305@14:5 E0310@15:10 E0310@17:10 E0103@18:5");
}

TEST(SemaCalls, ProgramCalledFromFunctionBlock) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Helper
END_PROGRAM
FUNCTION_BLOCK Fb
    Helper();
END_FUNCTION_BLOCK
PROGRAM Main
    Helper();
END_PROGRAM
)"),
              "E0311@4:5");
}

TEST(SemaCalls, MethodsAndInterfaces) {
    const std::string decls = R"(INTERFACE IMotor
METHOD Start : BOOL
VAR_INPUT
    speed : INT;
END_VAR
END_METHOD
END_INTERFACE
FUNCTION_BLOCK Motor IMPLEMENTS IMotor
METHOD Start : BOOL
VAR_INPUT
    speed : INT;
END_VAR
    Start := speed > 0;
END_METHOD
END_FUNCTION_BLOCK
)"; // 15 lines
    Analysis ok(decls + R"(PROGRAM Main
VAR
    m : Motor;
    i : IMotor;
    b : BOOL;
END_VAR
    b := m.Start(3);
    i := m;
    b := i.Start(speed := 1);
END_PROGRAM
)");
    EXPECT_EQ(diagList(ok), "") << ok.rendered();
    EXPECT_EQ(assignedType(ok, "Main", 0), "BOOL");

    EXPECT_EQ(diagsOf(decls + R"(PROGRAM Main
VAR
    m : Motor;
    i : IMotor;
    b : BOOL;
END_VAR
    b := m.Stop();
    b := i.Stop();
END_PROGRAM
)"),
              "E0701@22:12 E0701@23:12");
}

TEST(SemaCalls, StandardFunctionsResolve) {
    Analysis a(R"(PROGRAM Main
VAR
    i : INT;
    d : DINT;
    r : REAL;
    l : LREAL;
    w : WORD;
    s : STRING;
    t : TIME;
    b : BOOL;
END_VAR
    i := MAX(i, 1, 2, 3, i);
    d := MAX(i, d);
    r := MUX(i, r, 2.0, r);
    i := SEL(b, 1, i);
    i := LIMIT(0, i, 100);
    r := INT_TO_REAL(i);
    i := LEN(s);
    s := CONCAT(s, 'x');
    w := SHL(w, 2);
    l := SQRT(l);
    t := ADD_TIME(t, T#1s);
    d := TRUNC(r);
    b := GT(i, 1, 0);
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "") << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "INT");
    EXPECT_EQ(assignedType(a, "Main", 1), "DINT");
    EXPECT_EQ(assignedType(a, "Main", 2), "REAL");
    EXPECT_EQ(assignedType(a, "Main", 3), "INT");
    EXPECT_EQ(assignedType(a, "Main", 5), "REAL");
    EXPECT_EQ(assignedType(a, "Main", 6), "INT");
    EXPECT_EQ(assignedType(a, "Main", 8), "WORD");
    EXPECT_EQ(assignedType(a, "Main", 10), "TIME");
    EXPECT_EQ(assignedType(a, "Main", 11), "DINT");
    EXPECT_EQ(assignedType(a, "Main", 12), "BOOL");

    const ast::PouDecl* main = findPou(a, "Main");
    ASSERT_NE(main, nullptr);
    const auto& call = static_cast<const ast::CallExpr&>(*static_cast<const ast::AssignStmt&>(*main->body[0]).value);
    EXPECT_GE(call.stdOverload, 0);
    ASSERT_NE(call.genericType, nullptr);
    EXPECT_EQ(call.genericType->name(), "INT");
    ASSERT_NE(call.target, nullptr);
    EXPECT_EQ(call.target->name, "MAX");
}

TEST(SemaCalls, StandardFunctionMismatch) {
    Analysis a(R"(PROGRAM Main
VAR
    i : INT;
    s : STRING;
    r : REAL;
END_VAR
    i := MAX(i, s);
    r := SQRT(i, i);
    i := MUX(r, i, i);
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "E0306@7:10 E0301@8:10 E0306@9:10") << a.rendered();
    EXPECT_NE(messageOf(a, "E0306").find("(INT, STRING)"), std::string::npos) << messageOf(a, "E0306");
    EXPECT_NE(messageOf(a, "E0306").find("ANY_ELEMENTARY"), std::string::npos) << messageOf(a, "E0306");
}

TEST(SemaCalls, AssertionsOnlyInTests) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    ASSERT_EQUAL(1, i);
END_PROGRAM
TEST_PROGRAM T1
VAR
    i : INT;
END_VAR
    ASSERT_EQUAL(0, i);
    ASSERT_TRUE(i = 0);
    ASSERT_NEAR(1.0, 1.05, 0.1);
END_TEST_PROGRAM
)"),
              "E0710@5:5");
}

TEST(SemaCalls, NamespacesAndStandardBlocks) {
    Analysis a(R"(NAMESPACE Lib
FUNCTION Twice : DINT
VAR_INPUT
    x : DINT;
END_VAR
    Twice := x * 2;
END_FUNCTION
END_NAMESPACE
PROGRAM Main
VAR
    d : DINT;
    u : ULINT;
    c : CTU_DINT;
    cu : CTUD_ULINT;
    edge : R_TRIG;
    latch : SR;
    ch : CHAR := 'a';
END_VAR
    d := Lib.Twice(21);
    c(CU := edge.Q, R := FALSE, PV := 100000);
    d := c.CV;
    cu(CU := TRUE, CD := FALSE, R := FALSE, LD := FALSE, PV := 5);
    u := cu.CV;
    edge(CLK := cu.QU);
    latch(S1 := c.Q, R := FALSE);
    ch := CHAR#'b';
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "") << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "DINT");
    EXPECT_EQ(assignedType(a, "Main", 4), "ULINT");
}

} // namespace
} // namespace takt::compiler::test
