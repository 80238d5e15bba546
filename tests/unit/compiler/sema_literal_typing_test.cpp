// Literals typed by where they are used, as CODESYS, TwinCAT, OpenPLC and OSCAT sources write
// them: integer constants where a REAL is expected, 0 and 1 where a BOOL is expected, literals
// inside nested calls, and enumeration literals next to a variable named like their type.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

TEST(SemaLiteralTyping, IntegerConstantsIncludingNegatedOnesFitRealAndLreal) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    r : REAL := -5;
    l : LREAL := -9007199254740993;
    big : REAL := 4294967296;
END_VAR
    r := -42;
    l := -7;
    r := 3 - 10;
    l := -(7);
    big := big + r;
END_PROGRAM
)"),
              "");
}

TEST(SemaLiteralTyping, PowerHasTheTypesOfExpt) {
    Analysis a(R"(PROGRAM Main
VAR
    i : DINT;
    j : INT;
    s : SINT;
    r : REAL;
END_VAR
    i := i ** j;
    i := 2 ** 10;
    s := s ** 2;
    r := r ** 2;
    r := 2 ** 0.5;
    i := EXPT(i, j);
    i := r ** 2;
END_PROGRAM
)");
    // REAL ** n is a REAL, as EXPT(REAL, n) is: into a DINT it is an implicit narrowing, which
    // the default dialect accepts with W1010 (an error under dialect "iec").
    EXPECT_EQ(diagList(a), "W1010@14:10") << a.rendered();
}

TEST(SemaLiteralTyping, VariableNamedLikeItsEnumerationType) {
    EXPECT_EQ(diagsOf(R"(TYPE Color : (Red, Green, Blue); END_TYPE
PROGRAM Main
VAR
    color : Color := Color#Red;
    other : Color := COLOR#Green;
    same : BOOL;
END_VAR
    color := Color#Blue;
    same := color = color#Blue OR other = Color#Red;
END_PROGRAM
)"),
              "");
}

TEST(SemaLiteralTyping, NestedCallsOfLiteralsTakeTheExpectedType) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    x : REAL := SIN(COS(3.14));
    y : REAL;
    n : INT;
END_VAR
    x := SIN(COS(3.14));
    x := SIN(2.0 * COS(1.0)) + MAX(-COS(0.5), 0.25);
    y := ABS(MIN(-2.5, 1.0)) + SQRT(ABS(-4.0));
    n := LIMIT(0, ABS(-3), 100);
END_PROGRAM
)"),
              "");
}

TEST(SemaLiteralTyping, ArrayBoundsMayUseConstantsDeclaredLater) {
    EXPECT_EQ(diagsOf(R"(FUNCTION_BLOCK Buffer
VAR
    items : ARRAY[0..SIZE - 1] OF INT;
END_VAR
VAR CONSTANT
    SIZE : INT := 8;
END_VAR
    items[SIZE - 1] := 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    grid : ARRAY[1..ROWS, 1..COLS] OF BOOL;
END_VAR
VAR CONSTANT
    ROWS : INT := 3;
    COLS : INT := ROWS * 2;
END_VAR
    grid[ROWS, COLS] := TRUE;
END_PROGRAM
)"),
              "");
}

TEST(SemaLiteralTyping, ZeroAndOneAreBoolLiterals) {
    Analysis a(R"(PROGRAM Main
VAR
    b : BOOL := 1;
    c : BOOL := 0;
    d : BOOL := 2;
END_VAR
    b := 0;
    IF b = 1 OR 0 <> c THEN
        c := 1;
    END_IF;
    b := b = 2 OR d;
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "E0504@5:17 E0504@11:14") << a.rendered();
}

} // namespace
} // namespace takt::compiler::test
