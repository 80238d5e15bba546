// Expression typing in bodies: name resolution, member access, indexing, references, bit
// access, operators and implicit conversions.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

TEST(SemaExpr, UnknownIdentifierIsNamed) {
    Analysis a(R"(PROGRAM Main
VAR
    a : INT;
END_VAR
    a := missing + 1;
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "E0104@5:10") << a.rendered();
    EXPECT_NE(messageOf(a, "E0104").find("'missing'"), std::string::npos);
}

TEST(SemaExpr, NamesResolveLocalsBeforeGlobalsAndThroughExternals) {
    Analysis a(R"(VAR_GLOBAL
    g : INT;
    shadowed : BOOL;
END_VAR
PROGRAM Main
VAR
    shadowed : DINT;
    r : DINT;
END_VAR
VAR_EXTERNAL
    g : INT;
END_VAR
    r := shadowed;
    r := g;
END_PROGRAM
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "DINT");
    EXPECT_EQ(assignedType(a, "Main", 1), "INT");
}

TEST(SemaExpr, BaseFbMembersAreVisibleInDerivedFb) {
    Analysis a(R"(FUNCTION_BLOCK Base
VAR
    count : INT;
END_VAR
END_FUNCTION_BLOCK
FUNCTION_BLOCK Derived EXTENDS Base
    count := count + 1;
    SUPER^();
END_FUNCTION_BLOCK
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
}

TEST(SemaExpr, EnumValuesBareTypedAndAmbiguous) {
    const std::string types = R"(TYPE
    Mode : (Idle, Run, Stop);
    Pump : (Off, Run);
END_TYPE
)";
    Analysis ok(types + R"(PROGRAM Main
VAR
    m : Mode;
    p : Pump;
END_VAR
    m := Idle;
    m := Mode#Run;
    p := Run;
    IF m = Run THEN
        m := Stop;
    END_IF;
END_PROGRAM
)");
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();
    EXPECT_EQ(assignedType(ok, "Main", 0), "Mode");
    EXPECT_EQ(assignedType(ok, "Main", 2), "Pump");

    Analysis bad(types + R"(PROGRAM Main
VAR
    i : INT;
END_VAR
    i := Run;
END_PROGRAM
)");
    EXPECT_EQ(diagList(bad), "E0106@9:10") << bad.rendered();
    EXPECT_NE(messageOf(bad, "E0106").find("Mode#Run"), std::string::npos);
}

TEST(SemaExpr, MemberAccessOnStructsAndFbs) {
    const std::string decls = R"(TYPE Point : STRUCT
    x : INT;
    y : INT;
END_STRUCT
END_TYPE
FUNCTION_BLOCK Motor
VAR_INPUT
    speed : INT;
END_VAR
VAR_OUTPUT
    running : BOOL;
END_VAR
VAR
    secret : INT;
END_VAR
END_FUNCTION_BLOCK
)";
    Analysis ok(decls + R"(PROGRAM Main
VAR
    p : Point;
    m : Motor;
    v : INT;
    b : BOOL;
END_VAR
    v := p.x + p.y;
    b := m.running;
    m.speed := 3;
END_PROGRAM
)");
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();

    EXPECT_EQ(diagsOf(decls + R"(PROGRAM Main
VAR
    p : Point;
    m : Motor;
    v : INT;
END_VAR
    v := p.z;
    v := m.secret;
    v := v.x;
END_PROGRAM
)"),
              "E0105@23:12 W1002@24:12 E0207@25:12");
}

TEST(SemaExpr, ThisAndSuper) {
    EXPECT_EQ(diagsOf(R"(FUNCTION_BLOCK Fb
VAR
    x : INT;
END_VAR
    THIS^.x := 1;
    SUPER^();
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    y : INT;
END_VAR
    y := THIS^.y;
END_PROGRAM
)"),
              "E0704@6:5 E0703@12:10");
}

TEST(SemaExpr, Indexing) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    arr : ARRAY [1..10] OF INT;
    grid : ARRAY [0..2, 0..2] OF INT;
    v : INT;
    r : REAL;
END_VAR
    v := arr[2] + grid[1, 2];
    v := v[1];
    v := grid[1];
    v := arr[r];
    v := arr[11];
END_PROGRAM
)"),
              "E0205@9:10 E0206@10:10 E0211@11:14 E0213@12:14");
}

TEST(SemaExpr, ReferencesAndDereference) {
    Analysis ok(R"(PROGRAM Main
VAR
    x : INT;
    r : REF_TO INT;
END_VAR
    r := REF(x);
    r^ := 5;
    IF r <> NULL THEN
        x := r^;
    END_IF;
    r := NULL;
END_PROGRAM
)");
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();
    EXPECT_EQ(assignedType(ok, "Main", 0), "REF_TO INT");

    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    x : INT;
    r : REF_TO INT;
END_VAR
    x := x^;
    r := REF(x + 1);
END_PROGRAM
)"),
              "E0208@6:10 E0209@7:14");
}

TEST(SemaExpr, PartialBitAccess) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    w : WORD;
    i : REAL;
    b : BOOL;
END_VAR
    b := w.3;
    w.15 := TRUE;
    b := w.%X16;
    b := i.1;
END_PROGRAM
)"),
              "E0212@9:10 E0212@10:10");
}

TEST(SemaExpr, OperatorTyping) {
    Analysis ok(R"(PROGRAM Main
VAR
    i : INT;
    d : DINT;
    r : REAL;
    t : TIME;
    tod1 : TOD;
    dt1 : DT;
    w : WORD;
    b : BOOL;
END_VAR
    d := i + d;
    r := r ** 2.0;
    t := t + T#1s;
    t := t * 2;
    t := t / i;
    tod1 := tod1 + T#1h;
    t := dt1 - dt1;
    t := D#2024-01-02 - D#2024-01-01;
    w := w AND 16#FF;
    b := b XOR TRUE;
    b := (i < 3) OR (t >= T#5s);
    i := 7 MOD 3;
END_PROGRAM
)");
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();
    EXPECT_EQ(assignedType(ok, "Main", 0), "DINT");
    EXPECT_EQ(assignedType(ok, "Main", 1), "REAL");
    EXPECT_EQ(assignedType(ok, "Main", 2), "TIME");
    EXPECT_EQ(assignedType(ok, "Main", 3), "TIME");
    EXPECT_EQ(assignedType(ok, "Main", 5), "TOD");
    EXPECT_EQ(assignedType(ok, "Main", 6), "TIME");
    EXPECT_EQ(assignedType(ok, "Main", 7), "TIME");
    EXPECT_EQ(assignedType(ok, "Main", 8), "WORD");
    EXPECT_EQ(assignedType(ok, "Main", 10), "BOOL");
}

TEST(SemaExpr, InvalidOperands) {
    Analysis a(R"(TYPE
    Mode : (Idle, Run);
    Pump : (Off, Running);
END_TYPE
PROGRAM Main
VAR
    i : INT;
    r : REAL;
    b : BOOL;
    s : STRING;
    t : TIME;
    m : Mode;
    p : Pump;
END_VAR
    b := b + 1;
    r := r MOD 2.0;
    i := i AND b;
    b := s < i;
    t := t + i;
    b := m = p;
    b := NOT r;
END_PROGRAM
)");
    EXPECT_EQ(diagList(a), "E0203@15:10 E0203@16:10 E0203@17:10 E0203@18:10 E0203@19:10 E0203@20:10 E0203@21:10")
        << a.rendered();
    EXPECT_NE(messageOf(a, "E0203").find("BOOL"), std::string::npos);
}

TEST(SemaExpr, ImplicitConversions) {
    Analysis a(R"(PROGRAM Main
VAR
    i : INT;
    d : DINT;
    r : REAL;
    s : STRING[4];
    b : BOOL;
END_VAR
    d := i;
    r := i;
    i := d;
    i := r;
    b := s;
    s := 'abcdef';
END_PROGRAM
)");
    // Narrowing numbers is CODESYS's W1010 (an error under dialect "iec"), BOOL from STRING never.
    EXPECT_EQ(diagList(a), "W1010@11:10 W1010@12:10 E0201@13:10 W0011@14:10") << a.rendered();
    EXPECT_NE(messageOf(a, "W1010").find("computed as DINT_TO_INT"), std::string::npos) << messageOf(a, "W1010");
}

TEST(SemaExpr, RealEqualityWarns) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    r : REAL;
    b : BOOL;
END_VAR
    b := r = 0.1;
    b := r < 0.1;
END_PROGRAM
)"),
              "W0006@6:10");
}

// Folding a product of two large ULINT constants passed even the compiler's 128-bit arithmetic
// (a signed overflow, which the sanitizer build stops at): found by comparing generated programs
// between the execution tiers. Such a product is no constant and wraps at run time.
TEST(SemaExpr, ProductOfTwoLargeUlintConstantsIsNoOverflowInTheCompiler) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR q : ULINT; a : ARRAY[0..3] OF INT; END_VAR
    q := ULINT#18446744073709551615 * ULINT#18446744073709551614;
    a[ULINT_TO_DINT(ULINT#18446744073709551615 * ULINT#18446744073709551614)] := 1;
    q := q + 1;
END_PROGRAM
)"),
              "");
}

TEST(SemaExpr, UntypedConstantsAreRangeChecked) {
    EXPECT_EQ(diagsOf(R"(TYPE Percent : INT (0..100); END_TYPE
PROGRAM Main
VAR
    s : SINT;
    u : USINT;
    p : Percent;
END_VAR
    s := 127;
    s := 128;
    u := -1;
    s := -128;
    p := 50;
    p := 101;
END_PROGRAM
)"),
              "E0504@9:10 E0504@10:10 E0210@13:10");
}

} // namespace
} // namespace takt::compiler::test
