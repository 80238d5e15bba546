// Constant evaluation: integer wrap rules, reals, TIME arithmetic, enums, CONSTANT chains and
// the declarations that depend on it (array bounds, STRING lengths, subranges).
#include <gtest/gtest.h>

#include "sema/context.h"
#include "sema_test_support.h"

namespace takt::compiler {
namespace {

using sema::ConstValue;

// Evaluates the initial value of the CONSTANT `Main.<name>` in its own scope.
std::optional<ConstValue> initOf(test::Analysis& a, const std::string& name, bool report = false) {
    const Symbol* s = a.symbol("Main." + name);
    EXPECT_NE(s, nullptr) << name;
    if (s == nullptr || s->init == nullptr) {
        return std::nullopt;
    }
    AnalysisOptions options;
    sema::Context cx{*a.result.model, a.diags, a.sm, options, a.units};
    return sema::evaluateConstant(cx, *s->init, s->declScope, report);
}

std::string program(const std::string& constants) {
    return "TYPE Mode : (Idle, Run := 5, Stop); END_TYPE\n"
           "PROGRAM Main\nVAR CONSTANT\n" +
           constants + "END_VAR\nEND_PROGRAM\n";
}

TEST(ConstEval, IntegerArithmeticAndPrecedence) {
    test::Analysis a(program("  a : DINT := 2 + 3 * 4;\n  b : DINT := (2 + 3) * 4;\n  c : LINT := -7 / 2;\n"
                             "  d : INT := -7 MOD 3;\n  e : INT := 7 MOD -3;\n"));
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(initOf(a, "a")->i, 14);
    EXPECT_EQ(initOf(a, "b")->i, 20);
    EXPECT_EQ(initOf(a, "c")->i, -3); // truncation toward zero
    EXPECT_EQ(initOf(a, "d")->i, -1); // MOD has the dividend's sign
    EXPECT_EQ(initOf(a, "e")->i, 1);
}

TEST(ConstEval, TypedArithmeticWrapsToTheTypeWidth) {
    test::Analysis w(program("  a : SINT := SINT#127 + 1;\n  b : USINT := USINT#0 - 1;\n"
                             "  c : ULINT := 16#FFFF_FFFF_FFFF_FFFF;\n  d : WORD := NOT WORD#16#00FF;\n"
                             "  e : LINT := -9223372036854775807 - 1;\n"));
    ASSERT_EQ(w.errors(), 0u) << w.rendered();
    EXPECT_EQ(initOf(w, "a")->i, -128);
    EXPECT_EQ(initOf(w, "b")->i, 255);
    const auto c = initOf(w, "c");
    EXPECT_TRUE(c->isUnsigned);
    EXPECT_EQ(static_cast<std::uint64_t>(c->i), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(initOf(w, "d")->i, 0xFF00);
    EXPECT_EQ(initOf(w, "e")->i, std::numeric_limits<std::int64_t>::min());
}

TEST(ConstEval, RealsBoolsAndConversions) {
    test::Analysis a(program("  r : LREAL := 1.5 * 2;\n  b : BOOL := TRUE AND NOT FALSE;\n"
                             "  i1 : INT := REAL_TO_INT(2.5);\n  i2 : INT := REAL_TO_INT(3.5);\n"
                             "  i3 : INT := REAL_TO_INT(-2.5);\n  cmp : BOOL := 3 > 2.5;\n"
                             "  x : REAL := INT_TO_REAL(7) / 2;\n  m : DINT := MAX(3, 9, 4);\n"));
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_DOUBLE_EQ(initOf(a, "r")->r, 3.0);
    EXPECT_EQ(initOf(a, "b")->kind, ConstValue::Kind::Bool);
    EXPECT_EQ(initOf(a, "b")->i, 1);
    EXPECT_EQ(initOf(a, "i1")->i, 2); // ties to even
    EXPECT_EQ(initOf(a, "i2")->i, 4);
    EXPECT_EQ(initOf(a, "i3")->i, -2);
    EXPECT_EQ(initOf(a, "cmp")->i, 1);
    EXPECT_DOUBLE_EQ(initOf(a, "x")->r, 3.5);
    EXPECT_EQ(initOf(a, "m")->i, 9);
}

TEST(ConstEval, TimeArithmetic) {
    test::Analysis a(program("  t1 : TIME := T#1s + T#500ms;\n  t2 : TIME := T#100ms * 3;\n"
                             "  t3 : TIME := T#1s / 4;\n  t4 : BOOL := T#1m > T#59s;\n  t5 : LTIME := LTIME#2s;\n"));
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(initOf(a, "t1")->i, 1'500'000'000);
    EXPECT_EQ(initOf(a, "t1")->kind, ConstValue::Kind::Time);
    EXPECT_EQ(initOf(a, "t2")->i, 300'000'000);
    EXPECT_EQ(initOf(a, "t3")->i, 250'000'000);
    EXPECT_EQ(initOf(a, "t4")->i, 1);
    EXPECT_EQ(stripAlias(initOf(a, "t5")->type)->kind(), TypeKind::LTime);
}

TEST(ConstEval, TimeAndDateConversionsCountMillisecondsOrSeconds) {
    test::Analysis a(program("  ms : DWORD := TIME_TO_DWORD(T#1s);\n  neg : DINT := TO_DINT(T#-1500us);\n"
                             "  t : TIME := DWORD_TO_TIME(1000);\n  rt : TIME := REAL_TO_TIME(1.5);\n"
                             "  r : REAL := TIME_TO_REAL(T#100ms);\n"
                             "  secs : UDINT := DATE_TO_UDINT(D#1970-01-02);\n  tod : TOD := DINT_TO_TOD(1500);\n"));
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    for (const char* name : {"ms", "neg", "t", "rt", "r", "secs", "tod"}) {
        ASSERT_TRUE(initOf(a, name).has_value()) << name << " is not folded";
    }
    EXPECT_EQ(initOf(a, "ms")->i, 1000);
    EXPECT_EQ(initOf(a, "neg")->i, -1); // whole milliseconds, toward zero
    EXPECT_EQ(initOf(a, "t")->kind, ConstValue::Kind::Time);
    EXPECT_EQ(initOf(a, "t")->i, 1'000'000'000);
    EXPECT_EQ(initOf(a, "rt")->i, 1'500'000);
    EXPECT_DOUBLE_EQ(initOf(a, "r")->r, 100.0);
    EXPECT_EQ(initOf(a, "secs")->i, 86400);
    EXPECT_EQ(initOf(a, "tod")->i, 1'500'000'000);
}

TEST(ConstEval, EnumValuesAndConstantChains) {
    test::Analysis a("VAR_GLOBAL CONSTANT\n  N : INT := 10;\nEND_VAR\n" +
                     program("  m : Mode := Mode#Stop;\n  k : INT := N * 2 + 1;\n  bare : Mode := Run;\n"));
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(initOf(a, "m")->kind, ConstValue::Kind::Enum);
    EXPECT_EQ(initOf(a, "m")->i, 6); // after Run := 5
    EXPECT_EQ(initOf(a, "k")->i, 21);
    EXPECT_EQ(initOf(a, "bare")->i, 5);
}

TEST(ConstEval, NonConstantsAndDivisionByZeroAreReported) {
    test::Analysis a(
        "PROGRAM Main\nVAR\n  v : INT := 3;\nEND_VAR\nVAR CONSTANT\n  c : INT := 1;\nEND_VAR\n"
        "VAR\n  arr : ARRAY [1..v] OF INT;\n  z : ARRAY [0..10 / (c - 1)] OF INT;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("E0501"), std::vector<std::string>{"main.st:9:19"}) << a.rendered();
    EXPECT_EQ(a.at("E0502"), std::vector<std::string>{"main.st:10:17"}) << a.rendered();
}

TEST(ConstEval, CyclicConstantsTerminate) {
    test::Analysis a("VAR_GLOBAL CONSTANT\n  A : INT := B;\n  B : INT := A;\nEND_VAR\n"
                     "PROGRAM Main\nVAR\n  arr : ARRAY [0..A] OF INT;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_FALSE(a.at("E0501").empty()) << a.rendered();
}

TEST(ConstEval, BoundsLengthsAndSubrangesUseConstants) {
    test::Analysis a("VAR_GLOBAL CONSTANT\n  NLEN : INT := 4;\nEND_VAR\n"
                     "TYPE Pct : INT (0..NLEN * 25); END_TYPE\n"
                     "PROGRAM Main\nVAR\n  arr : ARRAY [1..NLEN, 0..NLEN - 1] OF DINT;\n  s : STRING[NLEN * 2];\n"
                     "  p : Pct;\nEND_VAR\nEND_PROGRAM\n");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const auto* arr = static_cast<const ArrayType*>(stripAlias(a.type("Main.arr")));
    ASSERT_EQ(arr->kind(), TypeKind::Array);
    EXPECT_EQ(arr->dims[0].upper, 4);
    EXPECT_EQ(arr->dims[1].upper, 3);
    EXPECT_EQ(arr->size, 64u);
    EXPECT_EQ(a.type("Main.s")->size, 9u);
    const auto* pct = static_cast<const SubrangeType*>(stripAlias(a.type("Main.p")));
    ASSERT_EQ(pct->kind(), TypeKind::Subrange);
    EXPECT_EQ(pct->upper, 100);
}

TEST(ConstEval, ExternalConstantsInBounds) {
    test::Analysis a({{"g.st", "VAR_GLOBAL CONSTANT\n  SIZE : INT := 8;\nEND_VAR\n"},
                      {"main.st", "PROGRAM Main\nVAR_EXTERNAL CONSTANT\n  SIZE : INT;\nEND_VAR\n"
                                  "VAR\n  buf : ARRAY [1..SIZE] OF BYTE;\nEND_VAR\nEND_PROGRAM\n"}});
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(stripAlias(a.type("Main.buf"))->size, 8u);
}

TEST(ConstEval, InvalidStringLengthAndBounds) {
    test::Analysis a("PROGRAM Main\nVAR\n  s : STRING[0];\n  a : ARRAY [5..1] OF INT;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("E0214"), std::vector<std::string>{"main.st:3:14"}) << a.rendered();
    EXPECT_EQ(a.at("E0503"), std::vector<std::string>{"main.st:4:14"}) << a.rendered();
}

} // namespace
} // namespace takt::compiler
