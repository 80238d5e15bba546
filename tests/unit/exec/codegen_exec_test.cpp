// Compiled ST run in the VM: the back end's code computes what the language says. Each test
// compiles a program, runs cycles on a virtual clock and reads variables through the
// module's variable table.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "st_runner.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/model.h"
#include "takt/vm/vm.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

TEST(CodegenExec, IntegerArithmeticLoopsAndBranches) {
    Runner r(R"(
PROGRAM Main
  VAR
    i : DINT; sum : DINT; evens : INT; n : SINT := 120; w : UINT := 16#FFFF;
    q : DINT; m : DINT; down : DINT; lastI : INT; wh : DINT; rp : DINT;
  END_VAR
  sum := 0;
  FOR i := 1 TO 10 DO
    sum := sum + i;
    IF i MOD 2 = 0 THEN evens := evens + 1; END_IF;
  END_FOR;
  n := n + 10;            (* SINT wraps: 130 -> -126 *)
  w := w + 1;             (* UINT wraps to 0 *)
  q := -7 / 2;
  m := -7 MOD 3;
  down := 0;
  FOR i := 10 TO 1 BY -3 DO down := down * 10 + i; END_FOR;
  FOR lastI := 32760 TO 32767 DO END_FOR;   (* ends at the type's maximum; after it 32768 wraps *)
  wh := 0;
  WHILE wh < 100 DO wh := wh + 7; IF wh > 50 THEN EXIT; END_IF; END_WHILE;
  rp := 0;
  REPEAT rp := rp + 1; UNTIL rp >= 5 END_REPEAT;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.sum"), 55);
    EXPECT_EQ(r.get<std::int16_t>("Main.evens"), 5);
    EXPECT_EQ(r.get<std::int8_t>("Main.n"), -126);
    EXPECT_EQ(r.get<std::uint16_t>("Main.w"), 0);
    EXPECT_EQ(r.get<std::int32_t>("Main.q"), -3);
    EXPECT_EQ(r.get<std::int32_t>("Main.m"), -1);
    EXPECT_EQ(r.get<std::int32_t>("Main.down"), 10741);
    EXPECT_EQ(r.get<std::int16_t>("Main.lastI"), -32768);
    EXPECT_EQ(r.get<std::int32_t>("Main.wh"), 56);
    EXPECT_EQ(r.get<std::int32_t>("Main.rp"), 5);
}

TEST(CodegenExec, ForStepZeroAtRunTimeTrapsBeforeTheBody) {
    for (const char* type : {"INT", "DINT", "LINT"}) {
        Runner r(std::string(R"(
PROGRAM Main
  VAR i : )") + type +
                 R"(; zero : )" + type + R"(; n : DINT; END_VAR
  FOR i := 1 TO 10 BY zero DO n := n + 1; END_FOR;
END_PROGRAM
)");
        ASSERT_TRUE(r.ok) << r.errors();
        EXPECT_EQ(r.cycle(), vm::Trap::ForStepZero) << type;
        EXPECT_EQ(r.get<std::int32_t>("Main.n"), 0) << type;
    }
}

// LANGUAGE.md: INT_MIN / -1 is a fault at every width, also where SINT/INT divide in 32 bits;
// one above the minimum still divides.
TEST(CodegenExec, NarrowIntMinDividedByMinusOneTraps) {
    const struct {
        const char* type;
        const char* min;
        const char* minPlusOne;
    } cases[] = {{"SINT", "-128", "-127"}, {"INT", "-32768", "-32767"}};
    for (const auto& c : cases) {
        for (const char* expr : {"a / b", "DIV(a, b)"}) {
            for (const bool atMin : {false, true}) {
                const std::string t = c.type;
                Runner r("PROGRAM Main\n  VAR a : " + t + " := " + (atMin ? c.min : c.minPlusOne) + "; b : " + t +
                         " := -1; q : " + t + "; wide : DINT; n : DINT; END_VAR\n  q := " + expr +
                         ";\n  wide := q;\n  n := n + 1;\nEND_PROGRAM\n");
                ASSERT_TRUE(r.ok) << r.errors();
                EXPECT_EQ(r.cycle(), atMin ? vm::Trap::Overflow : vm::Trap::None) << t << " " << expr;
                EXPECT_EQ(r.get<std::int32_t>("Main.n"), atMin ? 0 : 1) << t << " " << expr;
                if (!atMin) {
                    EXPECT_EQ(r.get<std::int32_t>("Main.wide"), -std::stoi(c.minPlusOne)) << t << " " << expr;
                }
            }
        }
    }
}

TEST(CodegenExec, ForCounterWrittenThroughAReferenceStillStopsAtTheBound) {
    Runner r(R"(
PROGRAM Main
  VAR k : INT; pk : REF_TO INT; n : DINT; END_VAR
  pk := REF(k);
  FOR k := 0 TO 10 BY 3 DO n := n + 1; IF k = 3 THEN pk^ := 8; END_IF; END_FOR;  (* 0 3; 8 + 3 = 11 passes 10 *)
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.n"), 2);
    EXPECT_EQ(r.get<std::int16_t>("Main.k"), 11); // the first value that failed the test
}

TEST(CodegenExec, ElementLoadsByRunTimeSubscriptReadTheRightFieldAndTrapOutOfBounds) {
    Runner r(R"(
TYPE P : STRUCT a : DINT; b : INT; c : LREAL; d : BOOL; END_STRUCT; END_TYPE
PROGRAM Main
  VAR ps : ARRAY [-1..2] OF P; s : SINT; bs : ARRAY [1..3] OF BYTE; i : DINT;
      sumA : DINT; sumB : DINT; sumC : LREAL; nd : DINT; sumBs : DINT; bad : DINT; k : INT := 5; END_VAR
  FOR i := -1 TO 2 DO
    ps[i].a := i * 10; ps[i].b := INT#-3 * DINT_TO_INT(i); ps[i].c := DINT_TO_LREAL(i) / 2.0; ps[i].d := i > 0;
  END_FOR;
  FOR i := -1 TO 2 DO
    sumA := sumA + ps[i].a; sumB := sumB + ps[i].b; sumC := sumC + ps[i].c;
    IF ps[i].d THEN nd := nd + 1; END_IF;
  END_FOR;
  FOR s := 1 TO 3 DO bs[s] := DINT_TO_BYTE(SINT_TO_DINT(s) * 16#50); END_FOR;
  FOR s := 1 TO 3 DO sumBs := sumBs + BYTE_TO_DINT(bs[s]); END_FOR;
  bad := ps[k].a;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    EXPECT_EQ(r.cycle(), vm::Trap::ArrayBounds);
    EXPECT_EQ(r.get<std::int32_t>("Main.sumA"), 20);
    EXPECT_EQ(r.get<std::int32_t>("Main.sumB"), -6);
    EXPECT_EQ(r.get<double>("Main.sumC"), 1.0);
    EXPECT_EQ(r.get<std::int32_t>("Main.nd"), 2);
    EXPECT_EQ(r.get<std::int32_t>("Main.sumBs"), 0x50 + 0xA0 + 0xF0);
    EXPECT_EQ(r.get<std::int32_t>("Main.bad"), 0);
}

// The instance pointer of `fbs[i](…)` is used by every input store and by the call: the fused
// element store must not consume the IDX that computes it (a NULL-reference fault before).
TEST(CodegenExec, CallsOnArrayElementsByRunTimeSubscriptKeepTheInstancePointer) {
    Runner r(R"(
FUNCTION_BLOCK Acc
  VAR_INPUT enable : BOOL; add : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  METHOD Bump : DINT
    VAR_INPUT amount : DINT; END_VAR
    total := total + amount;
    Bump := total;
  END_METHOD
  IF enable THEN total := total + add; END_IF;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR timers : ARRAY [1..3] OF TON; accs : ARRAY [0..2] OF Acc; i : INT; run : BOOL := TRUE;
      last : DINT; sum : DINT; q1 : BOOL; q2 : BOOL; et3 : TIME; END_VAR
  FOR i := 1 TO 3 DO
    timers[i](IN := run, PT := T#10ms * i);
  END_FOR;
  q1 := timers[1].Q; q2 := timers[2].Q; et3 := timers[3].ET;
  sum := 0;
  FOR i := 0 TO 2 DO
    accs[i](enable := run, add := INT_TO_DINT(i) + 1);
    last := accs[i].Bump(amount := 100);
    sum := sum + accs[i].total;
  END_FOR;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(10), vm::Trap::None);
    ASSERT_EQ(r.cycle(10), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.q1"));
    EXPECT_FALSE(r.get<bool>("Main.q2"));
    EXPECT_EQ(r.get<std::int64_t>("Main.et3"), 10'000'000);
    EXPECT_EQ(r.get<std::int32_t>("Main.last"), 2 * (3 + 100));
    EXPECT_EQ(r.get<std::int32_t>("Main.sum"), 2 * (1 + 2 + 3 + 300));
}

TEST(CodegenExec, ElementStoresAndStructCopiesByRunTimeSubscript) {
    Runner r(R"(
TYPE S : STRUCT id : INT; v : REAL; f : BOOL; END_STRUCT; END_TYPE
PROGRAM Main
  VAR d : ARRAY [1..4] OF S; t : S; i : DINT; k : INT; x : REAL := 1.5; sumId : DINT; sumV : REAL;
      bad : DINT := 9; hit : DINT; tid : INT; END_VAR
  FOR k := 1 TO 4 DO
    d[k].id := INT#10 * k;          (* the value first, then the element (one STX) *)
    d[k].v := x * INT_TO_REAL(k);
    d[k].f := k > 2;
  END_FOR;
  t := d[1];                        (* whole structs: LDX_N, STX_N *)
  d[1] := d[4];
  d[4] := t;
  FOR i := 1 TO 4 DO sumId := sumId + d[i].id * i; sumV := sumV + d[i].v; IF d[i].f THEN hit := hit + 1; END_IF; END_FOR;
  tid := t.id;
  d[bad].v := x * 2.0;              (* out of bounds: traps, writes nothing *)
  sumId := -1;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    EXPECT_EQ(r.cycle(), vm::Trap::ArrayBounds);
    EXPECT_EQ(r.get<std::int32_t>("Main.sumId"), 40 * 1 + 20 * 2 + 30 * 3 + 10 * 4);
    EXPECT_EQ(r.get<float>("Main.sumV"), 15.0F);
    EXPECT_EQ(r.get<std::int32_t>("Main.hit"), 2);
    EXPECT_EQ(r.get<std::int16_t>("Main.tid"), 10);
    EXPECT_EQ(r.get<std::int16_t>("Main.k"), 5);
}

TEST(CodegenExec, IntForVariableIsStoredEveryIterationAndVisibleInATrap) {
    Runner r(R"(
FUNCTION_BLOCK Peek
  VAR_IN_OUT v : INT; END_VAR
  VAR_OUTPUT seen : DINT; END_VAR
  seen := seen * 10 + INT_TO_DINT(v);
END_FUNCTION_BLOCK
PROGRAM Main
  VAR k : INT; j : INT; p : Peek; down : DINT; a : ARRAY [0..3] OF DINT; after : INT; END_VAR
  FOR k := 1 TO 4 DO p(v := k); END_FOR;       (* the variable as the body sees it *)
  after := k;
  FOR j := 6 TO 0 BY -2 DO down := down * 10 + INT_TO_DINT(j); END_FOR;
  FOR k := 0 TO 9 DO a[k] := 1; END_FOR;       (* traps at k = 4 *)
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    EXPECT_EQ(r.cycle(), vm::Trap::ArrayBounds);
    EXPECT_EQ(r.get<std::int32_t>("Main.p.seen"), 1234);
    EXPECT_EQ(r.get<std::int16_t>("Main.after"), 5); // the first value that failed the test
    EXPECT_EQ(r.get<std::int32_t>("Main.down"), 6420);
    EXPECT_EQ(r.get<std::int16_t>("Main.j"), -2);
    EXPECT_EQ(r.get<std::int16_t>("Main.k"), 4); // the iteration that trapped
}

// x * y + z in one instruction rounds the product first: the same bits as through a variable.
TEST(CodegenExec, RealMultiplyAddEqualsMultiplyThenAdd) {
    Runner r(R"(
PROGRAM Main
  VAR a : REAL := 1.000244140625; c : REAL := -1.00048828125; la : LREAL := 1.0000000074505806;
      lc : LREAL := -1.0000000149011612; p : REAL; q : REAL; fused : REAL; split : REAL;
      lp : LREAL; lfused : LREAL; lsplit : LREAL; s : REAL; END_VAR
  fused := a * a + c;
  p := a * a;
  split := p + c;
  lfused := lc + la * la;
  lp := la * la;
  lsplit := lc + lp;
  s := SQRT(a * a + 3.0);
  q := a * a + 3.0;
  q := SQRT(q);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    const auto fused = r.get<float>("Main.fused");
    const auto split = r.get<float>("Main.split");
    EXPECT_EQ(std::memcmp(&fused, &split, sizeof fused), 0) << fused << " " << split;
    EXPECT_EQ(fused, 0.0F); // a fused multiply-add would keep 2^-24
    const auto lfused = r.get<double>("Main.lfused");
    const auto lsplit = r.get<double>("Main.lsplit");
    EXPECT_EQ(std::memcmp(&lfused, &lsplit, sizeof lfused), 0) << lfused << " " << lsplit;
    EXPECT_EQ(r.get<float>("Main.s"), r.get<float>("Main.q"));
}

TEST(CodegenExec, FunctionsFbsAndCase) {
    Runner r(R"(
FUNCTION Scale : REAL
  VAR_INPUT x : REAL; k : REAL := 2.0; END_VAR
  VAR tmp : REAL := 1.0; END_VAR
  tmp := tmp + x;        (* locals re-initialised on every call *)
  Scale := tmp * k;
END_FUNCTION
FUNCTION_BLOCK Counter
  VAR_INPUT step : INT := 1; END_VAR
  VAR_OUTPUT value : INT; END_VAR
  value := value + step;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR
    a : REAL; b : REAL; c : Counter; v : INT; k : INT; out : INT;
    t : TON; done : BOOL; cycles : INT;
  END_VAR
  a := Scale(x := 3.0);
  b := Scale(x := 1.0, k := 10.0);
  c(step := 5);
  c();                    (* the input keeps 5 *)
  c(value => v);
  FOR k := 1 TO 3 DO
    CASE k OF
      1: out := out + 1;
      2, 3: out := out + 10;
    ELSE
      out := 1000;
    END_CASE;
  END_FOR;
  cycles := cycles + 1;
  t(IN := TRUE, PT := T#5ms, Q => done);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_FLOAT_EQ(r.get<float>("Main.a"), 8.0f);
    EXPECT_FLOAT_EQ(r.get<float>("Main.b"), 20.0f);
    EXPECT_EQ(r.get<std::int16_t>("Main.v"), 15);
    EXPECT_EQ(r.get<std::int16_t>("Main.out"), 21);
    EXPECT_FALSE(r.get<bool>("Main.done"));
    for (int i = 0; i < 6; ++i) {
        ASSERT_EQ(r.cycle(), vm::Trap::None);
    }
    EXPECT_TRUE(r.get<bool>("Main.done"));
}

TEST(CodegenExec, ArraysStructsBitsAndTraps) {
    Runner r(R"(
TYPE Pt : STRUCT x : INT; y : DINT; END_STRUCT; END_TYPE
PROGRAM Main
  VAR
    a : ARRAY [-2..2] OF DINT; m : ARRAY [1..2, 0..2] OF INT; p : Pt; ps : ARRAY [1..3] OF Pt;
    i : INT; s : DINT; w : WORD; bit : BOOL; idx : INT := 7; bad : DINT; init : INT := 4; after : INT := init + 1;
  END_VAR
  FOR i := -2 TO 2 DO a[i] := i * i; END_FOR;
  m[2, 1] := 42;
  p.x := 3; p.y := p.x * 2;
  ps[2].y := 9;
  s := a[-2] + a[2] + m[2, 1] + p.y + ps[2].y;
  w := 0;
  w.3 := TRUE;
  bit := w.3;
  bad := a[idx];
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.initTrap, vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.after"), 5);
    EXPECT_EQ(r.cycle(), vm::Trap::ArrayBounds);
    EXPECT_EQ(r.get<std::int32_t>("Main.s"), 4 + 4 + 42 + 6 + 9);
    EXPECT_EQ(r.get<std::uint16_t>("Main.w"), 8);
    EXPECT_TRUE(r.get<bool>("Main.bit"));
}

TEST(CodegenExec, StandardFunctions) {
    Runner r(R"(
PROGRAM Main
  VAR
    mx : DINT; lim : INT; v_mux : INT; v_sel : REAL; v_add : DINT; v_gt : BOOL; v_gt2 : BOOL;
    r1 : INT; r2 : INT; r3 : INT; tr : DINT; v_shl : BYTE; v_rol : BYTE; sq : LREAL; ab : INT;
    tm : TIME; q : BOOL;
  END_VAR
  mx := MAX(3, 9, -2, 7);
  lim := LIMIT(0, 150, 100);
  v_mux := MUX(2, 10, 20, 30);
  v_sel := SEL(TRUE, 1.5, 2.5);
  v_add := ADD(1, 2, 3, 4);
  v_gt := GT(5, 3, 1);
  v_gt2 := GT(5, 3, 4);
  r1 := REAL_TO_INT(2.5);
  r2 := REAL_TO_INT(3.5);
  r3 := REAL_TO_INT(-2.5);
  tr := TRUNC(-2.7);
  v_shl := SHL(BYTE#16#81, 1);
  v_rol := ROL(BYTE#16#81, 1);
  sq := SQRT(16.0);
  ab := ABS(-5);
  tm := T#1s + T#500ms;
  q := tm > T#1s;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int32_t>("Main.mx"), 9);
    EXPECT_EQ(r.get<std::int16_t>("Main.lim"), 100);
    EXPECT_EQ(r.get<std::int16_t>("Main.v_mux"), 30);
    EXPECT_FLOAT_EQ(r.get<float>("Main.v_sel"), 2.5f);
    EXPECT_EQ(r.get<std::int32_t>("Main.v_add"), 10);
    EXPECT_TRUE(r.get<bool>("Main.v_gt"));
    EXPECT_FALSE(r.get<bool>("Main.v_gt2"));
    EXPECT_EQ(r.get<std::int16_t>("Main.r1"), 2);
    EXPECT_EQ(r.get<std::int16_t>("Main.r2"), 4);
    EXPECT_EQ(r.get<std::int16_t>("Main.r3"), -2);
    EXPECT_EQ(r.get<std::int32_t>("Main.tr"), -2);
    EXPECT_EQ(r.get<std::uint8_t>("Main.v_shl"), 0x02);
    EXPECT_EQ(r.get<std::uint8_t>("Main.v_rol"), 0x03);
    EXPECT_DOUBLE_EQ(r.get<double>("Main.sq"), 4.0);
    EXPECT_EQ(r.get<std::int16_t>("Main.ab"), 5);
    EXPECT_EQ(r.get<std::int64_t>("Main.tm"), 1'500'000'000);
    EXPECT_TRUE(r.get<bool>("Main.q"));
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The benchmark programs compile, verify, run and their `check` variable evolves.
class BenchProgram : public ::testing::TestWithParam<const char*> {};

TEST_P(BenchProgram, CompilesAndCheckEvolves) {
    const std::string text = readFile(std::string("/work/shared/bench-programs/") + GetParam() + ".st");
    if (text.empty()) {
        GTEST_SKIP() << "bench program not available";
    }
    Runner r(text);
    ASSERT_TRUE(r.ok) << r.errors();
    std::string checkPath;
    for (const auto& v : r.module().variables) {
        if (v.path.size() > 6 && sameName(v.path.substr(v.path.size() - 6), ".check")) {
            checkPath = v.path;
        }
    }
    ASSERT_FALSE(checkPath.empty());
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    const double first = r.get<double>(checkPath);
    for (int i = 0; i < 5; ++i) {
        ASSERT_EQ(r.cycle(), vm::Trap::None);
    }
    EXPECT_NE(r.get<double>(checkPath), first);
}

INSTANTIATE_TEST_SUITE_P(All, BenchProgram,
                         ::testing::Values("int_arith", "fb_calls", "real_math", "timers_edges", "array_struct"));

} // namespace
} // namespace takt::compiler
