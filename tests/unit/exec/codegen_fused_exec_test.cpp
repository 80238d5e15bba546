// The fused array idioms (ring index, running sum, subscript x + k) compute exactly what the
// unfused code computes: operand order where it is observable, VAR_IN_OUT addends, and overflow
// in trap mode, where no fusion may hide the overflow of the addition.
#include <gtest/gtest.h>

#include <limits>

#include "st_runner.h"
#include "takt/vm/vm.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

// The element on the left is read before a call on the right changes it (source order).
TEST(CodegenFusedExec, ElementIsReadBeforeACallThatChangesIt) {
    Runner r(R"(
FUNCTION Bump : DINT
  VAR_IN_OUT a : ARRAY [0..3] OF DINT; END_VAR
  a[1] := a[1] + 100;
  Bump := 0;
END_FUNCTION
PROGRAM Main
  VAR arr : ARRAY [0..3] OF DINT := [1, 2, 3, 4]; i : INT := 1; x : DINT; y : DINT; END_VAR
  x := arr[i] + Bump(arr);
  y := Bump(arr) + arr[i];
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.x"), 2);   // before the first Bump
    EXPECT_EQ(r.get<std::int32_t>("Main.y"), 202); // after the second
}

// A running sum into a VAR_IN_OUT accumulator, element on either side; the ring index of a
// window in a function (frame operands) and in an FB (instance operands).
TEST(CodegenFusedExec, RunningSumsThroughReferencesAndFrames) {
    Runner r(R"(
FUNCTION Accumulate : REAL
  VAR_IN_OUT acc : REAL; END_VAR
  VAR_INPUT v : ARRAY [1..4] OF REAL; END_VAR
  VAR k : INT; END_VAR
  FOR k := 1 TO 4 DO
    acc := v[k] + acc;
    acc := acc + v[k];
  END_FOR;
  Accumulate := acc;
END_FUNCTION
FUNCTION_BLOCK Window
  VAR_INPUT head : INT; END_VAR
  VAR_OUTPUT sum : LREAL; END_VAR
  VAR buf : ARRAY [0..4] OF LREAL := [1.0, 10.0, 100.0, 1000.0, 10000.0]; j : INT; END_VAR
  sum := 0.0;
  FOR j := 0 TO 2 DO
    sum := sum + buf[(head + j) MOD 5];
  END_FOR;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR total : REAL := 0.5; res : REAL; vals : ARRAY [1..4] OF REAL := [1.0, 2.0, 4.0, 8.0];
      w : Window; s3 : LREAL; s4 : LREAL; END_VAR
  res := Accumulate(acc := total, v := vals);
  w(head := 3); s3 := w.sum;
  w(head := 4); s4 := w.sum;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<float>("Main.total"), 30.5F);
    EXPECT_EQ(r.get<float>("Main.res"), 30.5F);
    EXPECT_EQ(r.get<double>("Main.s3"), 11001.0); // buf[3] + buf[4] + buf[0]
    EXPECT_EQ(r.get<double>("Main.s4"), 10011.0); // buf[4] + buf[0] + buf[1]
}

// overflow = "trap": the addition inside a ring index, a running sum or a subscript x + k
// still traps on overflow instead of wrapping or turning into a bounds fault.
TEST(CodegenFusedExec, TrapModeKeepsTheOverflowOfTheAddition) {
    const char* text = R"(
PROGRAM Main
  VAR_INPUT which : INT; END_VAR
  VAR a : DINT := 2147483647; arr : ARRAY [0..3] OF DINT := [1, 2, 3, 4]; r : DINT; i : DINT := 1; END_VAR
  CASE which OF
    1: r := (a + i) MOD 7;
    2: r := a + arr[i];
    3: r := arr[a + i];
  END_CASE;
END_PROGRAM
)";
    CodegenOptions trapping;
    trapping.overflowTrap = true;
    for (const std::int16_t which : {1, 2, 3}) {
        Runner wraps(text);
        ASSERT_TRUE(wraps.ok) << wraps.errors();
        wraps.set<std::int16_t>("Main.which", which);
        Runner traps(text, trapping);
        ASSERT_TRUE(traps.ok) << traps.errors();
        traps.set<std::int16_t>("Main.which", which);
        EXPECT_EQ(traps.cycle(), vm::Trap::Overflow) << which;
        // Wrapping: INT_MIN MOD 7, INT_MAX + 2 wraps, and the wrapped subscript is out of bounds.
        const vm::Trap t = wraps.cycle();
        if (which == 3) {
            EXPECT_EQ(t, vm::Trap::ArrayBounds);
        } else {
            ASSERT_EQ(t, vm::Trap::None) << which;
            EXPECT_EQ(wraps.get<std::int32_t>("Main.r"), which == 1 ? std::numeric_limits<std::int32_t>::min() % 7
                                                                    : std::numeric_limits<std::int32_t>::min() + 1);
        }
    }
}

// A first-order filter y := y * k + x * (1 - k) in one MUL2ADD: the products are rounded to the
// type before the sum, as the unfused MUL, MUL, ADD (no fused multiply-add).
TEST(CodegenFusedExec, FilterOfTwoProductsRoundsEachProduct) {
    Runner r(R"(
PROGRAM Main
  VAR y : REAL := 1.0; k : REAL := 1.0001220703125; m : REAL := 0.9998779296875;
      n : REAL := -1.0; ly : LREAL := 0.7; lx : LREAL := 0.3; z : REAL; f : LREAL; END_VAR
  z := k * m + n * y;
  f := ly * 0.99 + lx * 0.01;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    // (1 + 2^-13)(1 - 2^-13) = 1 - 2^-26 rounds to 1.0F in REAL: the sum is 0, not -2^-26.
    EXPECT_EQ(r.get<float>("Main.z"), 0.0F);
    volatile double p = 0.7 * 0.99;
    volatile double q = 0.3 * 0.01;
    EXPECT_EQ(r.get<double>("Main.f"), p + q);
}

// A REAL widened into LREAL arithmetic (explicitly or by the operation) is the exact LREAL
// value of the REAL, in source order, as F32_TO_F64 and the operation would give.
TEST(CodegenFusedExec, WidenedRealOperandsAreExact) {
    Runner r(R"(
PROGRAM Main
  VAR s : REAL := 0.1; k : LREAL := 3.0; m : LREAL; q : LREAL; a : LREAL; b : LREAL; w : LREAL; END_VAR
  m := REAL_TO_LREAL(s) * k;
  q := TO_LREAL(s) / k;
  a := k + REAL_TO_LREAL(s);
  b := k * s;
  w := k / s;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    const double s = 0.1F;
    EXPECT_EQ(r.get<double>("Main.m"), s * 3.0);
    EXPECT_EQ(r.get<double>("Main.q"), s / 3.0);
    EXPECT_EQ(r.get<double>("Main.a"), 3.0 + s);
    EXPECT_EQ(r.get<double>("Main.b"), 3.0 * s);
    EXPECT_EQ(r.get<double>("Main.w"), 3.0 / s); // the REAL divisor is not swapped
}

} // namespace
} // namespace takt::compiler
