// METHOD calls through INTERFACE values: dispatch on the instance's FB type, NULL checks,
// interface assignment and comparison, interfaces extending interfaces, EXTENDS overrides.
#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using testing::StRunner;

constexpr const char* kShapes = R"(
INTERFACE IShape
  METHOD Area : DINT
    VAR_INPUT scale : DINT := 1; bias : DINT; END_VAR
  END_METHOD
END_INTERFACE
INTERFACE INamed EXTENDS IShape
  METHOD Code : INT
    VAR_OUTPUT twice : INT; END_VAR
  END_METHOD
END_INTERFACE
FUNCTION_BLOCK Square IMPLEMENTS INamed
  VAR_INPUT side : DINT := 3; END_VAR
  VAR calls : INT; END_VAR
  METHOD Area : DINT
    VAR_INPUT scale : DINT := 1; bias : DINT; END_VAR
    VAR local : DINT := 100; END_VAR
    local := local + 1;          (* re-initialised on every call *)
    calls := calls + 1;
    Area := side * side * scale + local - 101 + bias;
  END_METHOD
  METHOD Code : INT
    VAR_OUTPUT twice : INT; END_VAR
    Code := 1; twice := 2;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Rect IMPLEMENTS IShape
  VAR_INPUT w : DINT := 2; h : DINT := 5; END_VAR
  METHOD Area : DINT
    VAR_INPUT scale : DINT := 1; bias : DINT; END_VAR
    Area := w * h * scale + bias;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Tall EXTENDS Rect
  METHOD Area : DINT
    VAR_INPUT scale : DINT := 1; bias : DINT; END_VAR
    Area := 1000 * scale + bias;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION Total : DINT
  VAR_INPUT s : IShape; END_VAR
  Total := s.Area(scale := 10);
END_FUNCTION
PROGRAM Main
  VAR
    sq : Square; re : Rect; tl : Tall;
    shapes : ARRAY [1..3] OF IShape;
    named : INamed;
    none : IShape;
    i : INT; sum : DINT; viaFn : DINT; code : INT; tw : INT;
    isNull : BOOL; same : BOOL; differ : BOOL; defaultScale : DINT;
    trapNow : BOOL;
  END_VAR
  shapes[1] := sq;
  shapes[2] := re;
  shapes[3] := tl;
  sum := 0;
  FOR i := 1 TO 3 DO
    sum := sum + shapes[i].Area(scale := i);
  END_FOR;
  defaultScale := shapes[1].Area(bias := 5);   (* scale keeps its default *)
  viaFn := Total(re);
  named := sq;
  code := named.Code(twice => tw);
  shapes[2] := named;                (* INamed converts to its base IShape *)
  isNull := none = NULL;
  same := shapes[1] = shapes[2];
  differ := shapes[1] <> shapes[3];
  IF trapNow THEN
    sum := none.Area(scale := 1);
  END_IF;
END_PROGRAM
)";

TEST(CodegenInterface, DispatchesOnTheInstanceType) {
    StRunner r(kShapes);
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.initTrap, vm::Trap::None);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    // Square 3*3*1, Rect 2*5*2, Tall (override) 1000*3
    EXPECT_EQ(r.get<std::int32_t>("Main.sum"), 9 + 20 + 3000);
    EXPECT_EQ(r.get<std::int32_t>("Main.defaultScale"), 14);
    EXPECT_EQ(r.get<std::int32_t>("Main.viaFn"), 100);
    EXPECT_EQ(r.get<std::int16_t>("Main.code"), 1);
    EXPECT_EQ(r.get<std::int16_t>("Main.tw"), 2);
    EXPECT_EQ(r.get<std::int16_t>("Main.sq.calls"), 2);
    EXPECT_TRUE(r.get<bool>("Main.isNull"));
    EXPECT_TRUE(r.get<bool>("Main.same"));
    EXPECT_TRUE(r.get<bool>("Main.differ"));
}

TEST(CodegenInterface, CallThroughNullTraps) {
    StRunner r(kShapes);
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    r.set<bool>("Main.trapNow", true);
    EXPECT_EQ(r.cycle(), vm::Trap::NullReference);
}

TEST(CodegenInterface, InstancesInArraysAndFunctionsCarryTheirTable) {
    StRunner r(R"(
INTERFACE ICount
  METHOD Bump : INT
  END_METHOD
END_INTERFACE
FUNCTION_BLOCK Up IMPLEMENTS ICount
  VAR_OUTPUT n : INT; END_VAR
  METHOD Bump : INT
    n := n + 1; Bump := n;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Down IMPLEMENTS ICount
  VAR n : INT; END_VAR
  METHOD Bump : INT
    n := n - 1; Bump := n;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION Local : INT
  VAR d : Down; c : ICount; END_VAR
  c := d;
  c.Bump();
  Local := c.Bump();
END_FUNCTION
PROGRAM Main
  VAR ups : ARRAY [0..2] OF Up; c : ICount; last : INT; loc : INT; k : INT; n1 : INT; END_VAR
  FOR k := 0 TO 2 DO
    c := ups[k];
    last := c.Bump() + last;
  END_FOR;
  c := ups[1];
  c.Bump();
  n1 := ups[1].n;
  loc := Local();
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.last"), 3);
    EXPECT_EQ(r.get<std::int16_t>("Main.n1"), 2);
    EXPECT_EQ(r.get<std::int16_t>("Main.loc"), -2);
}

} // namespace
} // namespace takt::compiler
