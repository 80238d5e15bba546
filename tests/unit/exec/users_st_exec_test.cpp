// Structured Text from third-party projects (OpenPLC programs, OSCAT, matiec, truST) that
// takt accepts beside CODESYS's own: compiled and run cycle by cycle, with the values worked
// out by hand from the documented rules (docs/language-notes.md, docs/dialects.md).
#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

// `F(EN := c)` is a formal call without further arguments: the inputs keep their initial
// values, EN FALSE skips it.
TEST(UsersSt, CallWithOnlyEnRunsWithTheInitialInputs) {
    Runner r(R"(
FUNCTION Scaled : INT
VAR_INPUT x : INT := 7; k : INT := 3; END_VAR
    Scaled := x * k;
END_FUNCTION
FUNCTION_BLOCK Count
VAR_INPUT step : INT := 2; END_VAR
VAR_OUTPUT n : INT; END_VAR
    n := n + step;
END_FUNCTION_BLOCK
PROGRAM Main
VAR c : BOOL; y : INT := -1; ok : BOOL; cnt : Count; END_VAR
    y := Scaled(EN := c, ENO => ok);
    cnt(EN := c);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), -1);
    EXPECT_FALSE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 0);
    r.set<bool>("Main.c", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), 21);
    EXPECT_TRUE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 2);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 4);
}

// SQRT, SIN … of an integer (W1016): converted to REAL when it is at most 16 bits wide and the
// context does not want LREAL, else to LREAL; the function computes in that type.
TEST(UsersSt, RealFunctionsOfIntegersComputeInRealOrLreal) {
    Runner r(R"(
PROGRAM Main
VAR
    i : INT := 2; n : INT := 16; d : DINT := 1000000; big : DINT := 2; l : LINT := 4;
    r16 : REAL; rInt : REAL; lInt : LREAL; rDint : LREAL; cosZero : REAL; lnOne : LREAL; sqL : LREAL;
END_VAR
    r16 := SQRT(n);
    rInt := SQRT(i);
    lInt := SQRT(i);
    rDint := SQRT(big);
    cosZero := COS(d - d);
    lnOne := LN(IN := d / d);
    sqL := SQRT(l);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<float>("Main.r16"), 4.0F);
    EXPECT_EQ(r.get<float>("Main.rInt"), 1.41421353816986083984375F); // sqrtf(2.0f)
    EXPECT_EQ(r.get<double>("Main.lInt"), 1.4142135623730951);        // sqrt(2.0): LREAL expected
    EXPECT_EQ(r.get<double>("Main.rDint"), 1.4142135623730951);       // a DINT computes in LREAL
    EXPECT_EQ(r.get<float>("Main.cosZero"), 1.0F);
    EXPECT_EQ(r.get<double>("Main.lnOne"), 0.0);
    EXPECT_EQ(r.get<double>("Main.sqL"), 2.0);
}

// MULTIME and DIVTIME are MUL_TIME and DIV_TIME.
TEST(UsersSt, MultimeAndDivtime) {
    Runner r(R"(
PROGRAM Main
VAR a : TIME; b : TIME; c : TIME; k : INT := 3; END_VAR
    a := MULTIME(T#100ms, k);
    b := DIVTIME(T#1s, 4);
    c := MULTIME(IN1 := T#1s, IN2 := 1.5);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.a"), 300'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.b"), 250'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.c"), 1'500'000'000);
}

} // namespace
} // namespace takt::compiler
