// Statements, assignability and initialisers.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

TEST(SemaStmt, AssignmentTargets) {
    EXPECT_EQ(diagsOf(R"(VAR_GLOBAL CONSTANT
    maxCount : INT := 10;
END_VAR
FUNCTION_BLOCK Fb
VAR_INPUT
    x : INT;
END_VAR
VAR_OUTPUT
    q : BOOL;
END_VAR
    x := 1;
    q := TRUE;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    i : INT;
    fb1 : Fb;
END_VAR
VAR CONSTANT
    c : INT := 3;
END_VAR
    i + 1 := 2;
    c := 4;
    maxCount := 5;
    fb1.x := 1;
    fb1.q := FALSE;
    fb1();
END_PROGRAM
)"),
              "W1001@11:5 E0403@22:5 E0401@23:5 E0401@24:5 W1003@26:5");
}

TEST(SemaStmt, ExternalConstantsAreReadOnly) {
    EXPECT_EQ(diagsOf(R"(VAR_GLOBAL CONSTANT
    kMax : INT := 10;
END_VAR
PROGRAM Main
VAR_EXTERNAL CONSTANT
    kMax : INT;
END_VAR
    kMax := 11;
END_PROGRAM
)"),
              "E0413@8:5");
}

TEST(SemaStmt, ConditionsMustBeBool) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    i : INT;
    b : BOOL;
END_VAR
    IF i THEN
        i := 1;
    ELSIF b THEN
        i := 2;
    ELSIF i + 1 THEN
        i := 3;
    END_IF;
    WHILE i DO
        i := i - 1;
    END_WHILE;
    REPEAT
        i := i + 1;
    UNTIL 5
    END_REPEAT;
END_PROGRAM
)"),
              "E0204@6:8 E0204@10:11 E0204@13:11 E0204@18:11");
}

TEST(SemaStmt, CaseSelectorsAndLabels) {
    EXPECT_EQ(diagsOf(R"(TYPE Mode : (Idle, Run, Stop); END_TYPE
PROGRAM Main
VAR
    i : INT;
    r : REAL;
    m : Mode;
END_VAR
    CASE i OF
        1, 2: i := 0;
        3..5: i := 1;
        4: i := 2;
        i: i := 3;
    ELSE
        i := 4;
    END_CASE;
    CASE r OF
        1: i := 0;
    END_CASE;
    CASE m OF
        Idle: i := 0;
        Run: i := 1;
    END_CASE;
    CASE m OF
        Idle, Run, Stop: i := 0;
    END_CASE;
END_PROGRAM
)"),
              "E0407@11:9 E0408@12:9 E0411@16:10 W0007@19:10");
}

TEST(SemaStmt, ForLoops) {
    EXPECT_EQ(diagsOf(R"(VAR_GLOBAL
    g : INT;
END_VAR
PROGRAM Main
VAR
    i : INT;
    r : REAL;
    sum : DINT;
END_VAR
    FOR i := 1 TO 10 BY 2 DO
        sum := sum + i;
    END_FOR;
    FOR r := 1 TO 10 DO
        sum := 0;
    END_FOR;
    FOR g := 1 TO 10 DO
        sum := 0;
    END_FOR;
    FOR i := 1 TO 10 BY 0 DO
        sum := 0;
    END_FOR;
    FOR i := 1 TO 10 DO
        i := 5;
    END_FOR;
    FOR i := 1 TO 100000 DO
        sum := 0;
    END_FOR;
END_PROGRAM
)"),
              "E0409@13:9 E0409@16:9 E0406@19:25 E0410@23:9 E0504@25:19");
}

TEST(SemaStmt, MethodsLoopOverTheirFbMembers) {
    Analysis a(R"(FUNCTION_BLOCK Fb
VAR
    i : INT;
    total : INT;
END_VAR
METHOD Sum : INT
    FOR i := 1 TO 3 DO
        total := total + i;
    END_FOR;
    Sum := total;
END_METHOD
END_FUNCTION_BLOCK
)");
    EXPECT_EQ(diagList(a), "") << a.rendered();
}

// W0002 is reported once per statement list, at the first unreachable statement.
TEST(SemaStmt, ExitContinueAndUnreachableCode) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    EXIT;
    WHILE i < 10 DO
        i := i + 1;
        IF i = 5 THEN
            CONTINUE;
            i := 0;
        END_IF;
        EXIT;
    END_WHILE;
    CONTINUE;
    RETURN;
    i := 2;
END_PROGRAM
)"),
              "E0404@5:5 W0002@6:5 W0002@10:13 E0405@14:5");
}

TEST(SemaStmt, StraySemicolonsWarn) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    i := i + 1;;
    ;
END_PROGRAM
)"),
              "W0003@5:16 W0003@6:5");
}

TEST(SemaStmt, ExpressionStatementsMustBeCalls) {
    Analysis a(R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    i = 1;
    i;
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "E0412@5:5 E0412@6:5") << a.rendered();
    EXPECT_NE(messageOf(a, "E0412").find(":="), std::string::npos);
}

TEST(SemaStmt, FunctionResultNeverAssigned) {
    EXPECT_EQ(diagsOf(R"(FUNCTION Twice : INT
VAR_INPUT
    x : INT;
END_VAR
VAR
    t : INT;
END_VAR
    t := x * 2;
END_FUNCTION
FUNCTION Thrice : INT
VAR_INPUT
    x : INT;
END_VAR
    Thrice := x * 3;
END_FUNCTION
)"),
              "W0010@1:10");
}

TEST(SemaStmt, InitialiserOrderAndShapes) {
    EXPECT_EQ(diagsOf(R"(TYPE Point : STRUCT
    x : INT;
    y : INT;
END_STRUCT
END_TYPE
PROGRAM Main
VAR
    b : INT := 4;
    c : INT := b + 1;
    d : INT := e;
    e : INT := 1;
    arr : ARRAY [1..3] OF INT := [1, 2, 3];
    fill : ARRAY [1..10] OF INT := [2(1), 8(0)];
    many : ARRAY [1..2] OF INT := [1, 2, 3];
    p : Point := (x := 1, y := 2);
    q : Point := (x := 1, z := 2);
    wrong : INT := [1, 2];
    scalar : Point := 5;
    t : TON := (PT := T#1s);
END_VAR
    b := c + d + e + arr[1] + fill[1] + many[1] + p.x + q.x + wrong + scalar.x;
    t();
END_PROGRAM
)"),
              "E0507@10:16 E0506@14:35 E0105@16:27 E0505@17:20 E0505@18:23");
}

TEST(SemaStmt, InitialisersAreRangeChecked) {
    EXPECT_EQ(diagsOf(R"(TYPE Level : INT (0..100) := 150; END_TYPE
PROGRAM Main
VAR
    s : SINT := 200;
    name : STRING[3] := 'abcd';
END_VAR
    s := s + 1;
    name := 'ab';
END_PROGRAM
)"),
              "E0210@1:30 E0504@4:17 W0011@5:25");
}

TEST(SemaStmt, RecursionIsRejected) {
    EXPECT_EQ(diagsOf(R"(FUNCTION Factorial : DINT
VAR_INPUT
    n : DINT;
END_VAR
    IF n <= 1 THEN
        Factorial := 1;
    ELSE
        Factorial := n * Factorial(n - 1);
    END_IF;
END_FUNCTION
FUNCTION Ping : INT
    Ping := Pong();
END_FUNCTION
FUNCTION Pong : INT
    Pong := Ping();
END_FUNCTION
)"),
              "E0115@8:26 E0115@12:13 E0115@15:13");
}

TEST(SemaStmt, ConstantConditionsWarn) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR CONSTANT
    kDebug : BOOL := FALSE;
END_VAR
VAR
    i : INT;
END_VAR
    IF TRUE THEN
        i := 1;
    END_IF;
    WHILE 1 > 2 DO
        i := 2;
    END_WHILE;
    IF kDebug OR i > 3 THEN
        i := 3;
    ELSIF kDebug THEN
        i := 4;
    END_IF;
END_PROGRAM
)"),
              "W0005@8:8 W0005@11:11 W0005@16:11");
}

TEST(SemaStmt, UnusedLocalsWarn) {
    EXPECT_EQ(diagsOf(R"(FUNCTION_BLOCK Fb
VAR_INPUT
    unusedInput : INT;
END_VAR
VAR
    kept : INT;
    spare : INT;
END_VAR
    kept := kept + 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    fb1 : Fb;
    spare : BOOL;
    lamp AT %QX0.0 : BOOL;
END_VAR
VAR_TEMP
    scratch : REAL;
END_VAR
    fb1();
END_PROGRAM
)"),
              "W0001@7:5 W0001@14:5 W0001@18:5");
}

} // namespace
} // namespace takt::compiler::test
