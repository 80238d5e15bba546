// Back end: golden disassembly of representative constructs. The listings pin the shape of
// the generated code (direct memory-to-memory instructions, immediates, fused
// compare-and-branch, arguments written into the callee's frame), not just its effect.
#include "codegen_test_support.h"

namespace takt::compiler::test {
namespace {

TEST(CodegenDisasm, ArithmeticLoopAndBranches) {
    Compiled c(R"(
PROGRAM Main
  VAR i : DINT; x : DINT := 1; acc : DINT; n : INT; r : LREAL; END_VAR
  x := x + 1;
  acc := (acc + x * 3 + i) MOD 1000003;
  n := n + 1;
  FOR i := 1 TO 1000 DO
    IF x > 32760 THEN acc := acc + 1; ELSIF (x MOD 3) = 0 THEN acc := 0; END_IF;
  END_FOR;
  r := DINT_TO_LREAL(acc);
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(c.code("Main"), R"(  0000  ADD_I32_IMM  this+4 <Main.x>, this+4 <Main.x>, 1
  0004  MUL_I32_IMM  fp+0, this+4 <Main.x>, 3
  0008  ADD_I32      fp+8, this+8 <Main.acc>, fp+0
  000c  ADDMOD_I32_IMM this+8 <Main.acc>, fp+8, this+0 <Main.i>, 1000003, 18446688733644
  0013  SX_16_32     fp+0, this+12 <Main.n>
  0016  ADD_I32_IMM  fp+4, fp+0, 1
  001a  MOV_16       this+12 <Main.n>, fp+4
  001d  MOVI_32      this+0 <Main.i>, 1
L0020:
  0020  JLE_I32_IMM  this+4 <Main.x>, 32760, L002a
  0024  ADD_I32_IMM  this+8 <Main.acc>, this+8 <Main.acc>, 1
  0028  JMP          L0037
L002a:
  002a  MOD_I32_IMM  fp+0, this+4 <Main.x>, 3, 6148914691236517206
  0030  JNE_I32_IMM  fp+0, 0, L0037
  0034  MOVI_32      this+8 <Main.acc>, 0
L0037:
  0037  LOOP_I32_IMM this+0 <Main.i>, 999, 1, L0020
  003c  ADD_I32_IMM  this+0 <Main.i>, this+0 <Main.i>, 1
  0040  I32_TO_F64   this+16 <Main.r>, this+8 <Main.acc>
  0043  RET
)");
}

TEST(CodegenDisasm, FunctionFbCallAndArrayStore) {
    Compiled c(R"(
FUNCTION Twice : DINT
  VAR_INPUT a : DINT; END_VAR
  Twice := a * 2;
END_FUNCTION
FUNCTION_BLOCK Acc
  VAR_INPUT inc : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  total := total + inc;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR acc : Acc; t : DINT; r : LREAL; arr : ARRAY [1..5] OF INT; k : DINT; END_VAR
  t := Twice(t + 1);
  acc(inc := t, total => k);
  arr[k] := 3;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    // Result at fp+0 of the callee frame, the input after it (named by the frame layout); the
    // caller writes the argument at its frame offset 8 + 4 and calls with the callee frame at 8.
    EXPECT_EQ(c.code("Twice"), R"(  0000  COPY         fp+0 <Twice>, g:0x8, 4
  0004  MUL_I32_IMM  fp+0 <Twice>, fp+4 <a>, 2
  0008  RET
)");
    EXPECT_EQ(c.code("Acc"), R"(  0009  ADD_I32      this+4 <total>, this+4 <total>, this+0 <inc>
  000d  RET
)");
    EXPECT_EQ(c.code("Main"), R"(  000e  ADD_I32_IMM  fp+0, this+8 <Main.t>, 1
  0012  MOV_32       fp+12, fp+0
  0015  CALL_FN      Twice, 8
  0018  MOV_32       this+8 <Main.t>, fp+8
  001b  MOV_32       this+0 <Main.acc.inc>, this+8 <Main.t>
  001e  CALL_FB      Acc, this+0 <Main.acc.inc>, 0
  0022  MOV_32       this+36 <Main.k>, this+4 <Main.acc.total>
  0025  STX_16       g:0x18, this+24 <Main.arr>, this+36 <Main.k>, 1, 2, 5
  002c  RET
)");
}

// The fused forms of docs/performance.md: constant subscripts as operand offsets, constant FB
// inputs in one COPY, an INT FOR counter read from its slot with a one-instruction back-edge
// that also stores the variable (no entry test: the bounds are constants), MOD by a constant
// through its reciprocal, REAL compare-and-branch.
TEST(CodegenDisasm, HotPathsUseTheFusedForms) {
    Compiled c(R"(
FUNCTION_BLOCK Clamp
  VAR_INPUT x : REAL; lo : REAL; hi : REAL; END_VAR
  VAR_OUTPUT y : REAL; END_VAR
  y := x;
  IF x > hi THEN y := hi; END_IF;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR c : Clamp; a : ARRAY [0..9] OF REAL; i : INT; s : REAL; n : DINT; END_VAR
  c(x := a[3], lo := -1.0, hi := 1.0);
  FOR i := 0 TO 9 DO
    s := s + a[i] + INT_TO_REAL(i);
  END_FOR;
  n := n MOD 7;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    const std::string clamp = c.code("Clamp");
    EXPECT_NE(clamp.find("JNLT_F32"), std::string::npos) << clamp;
    EXPECT_EQ(clamp.find("GT_F32"), std::string::npos) << clamp;
    const std::string main = c.code("Main");
    auto count = [&](std::string_view what) {
        std::size_t n = 0;
        for (std::size_t at = main.find(what); at != std::string::npos; at = main.find(what, at + 1)) {
            ++n;
        }
        return n;
    };
    EXPECT_EQ(count("IDX "), 0u) << main; // a[3] is an operand, s + a[i] one ADDX_F32
    EXPECT_EQ(count("ADDX_F32 "), 1u) << main;
    EXPECT_EQ(count("LDX_32 "), 0u) << main;
    EXPECT_EQ(count("LDI_32 "), 0u) << main;
    EXPECT_EQ(count("COPY "), 1u) << main;    // lo and hi together
    EXPECT_EQ(count("MOVI_32 "), 1u) << main; // the FOR start only
    EXPECT_EQ(count("LOOP_I16_IMM "), 1u) << main;
    EXPECT_EQ(count("LOOP_I32_IMM "), 0u) << main;
    // The start value and the one after the loop; the back-edge stores the others.
    EXPECT_EQ(count("MOV_16 "), 2u) << main;
    EXPECT_EQ(count("JGT_I32_IMM "), 0u) << main;
    EXPECT_EQ(count("SX_16_32 "), 0u) << main;
    EXPECT_EQ(count("JMP "), 0u) << main;
    EXPECT_EQ(count("MOD_I32_IMM "), 1u) << main;
    EXPECT_EQ(count("MOD_I32 "), 0u) << main;
}

// A field of an array element by a run-time subscript: one LDX with the field offset folded
// into the array operand (also in a one-element array: the verifier checks the operand covers
// the field of the last element), straight into a destination of the computation width,
// widened to 32 bits for an INT; a store of a constant is one STX.
TEST(CodegenDisasm, ElementFieldLoadIsOneInstruction) {
    Compiled c(R"(
TYPE P : STRUCT a : DINT; b : INT; c : LREAL; END_STRUCT; END_TYPE
PROGRAM Main
  VAR ps : ARRAY [1..4] OF P; one : ARRAY [0..0] OF P; i : DINT; x : LREAL; y : INT; END_VAR
  x := ps[i].c;
  y := ps[i].b;
  y := one[i].b;
  ps[i].a := 5;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(c.code("Main"), R"(  0000  LDX_64       this+88 <Main.x>, this+8, this+80 <Main.i>, 1, 16, 4
  0007  LDX_S16      fp+8, this+4, this+80 <Main.i>, 1, 16, 4
  000e  MOV_16       this+96 <Main.y>, fp+8
  0011  LDX_S16      fp+8, this+68, this+80 <Main.i>, 0, 16, 1
  0018  MOV_16       this+96 <Main.y>, fp+8
  001b  STX_32       g:0x8, this+0 <Main.ps>, this+80 <Main.i>, 1, 16, 4
  0022  RET
)");
}

// Element stores: a value that cannot trap or write anything is computed first, so the IDX of
// the element is last and becomes the STX; a value that can trap (here a run-time subscript)
// keeps the source order, IDX then STI. Whole structs move by LDX_N (straight into a variable)
// and STX_N.
TEST(CodegenDisasm, ElementStoresAndCopiesFuseWithTheirIdx) {
    Compiled c(R"(
TYPE S : STRUCT id : INT; v : REAL; END_STRUCT; END_TYPE
PROGRAM Main
  VAR d : ARRAY [0..7] OF S; t : S; i : DINT; k : DINT; x : REAL; END_VAR
  d[i].v := x * 0.5;
  d[i].v := d[k].v;
  t := d[i];
  d[i] := d[k];
  d[k] := t;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(c.code("Main"), R"(  0000  MUL_F32      fp+0, this+80 <Main.x>, g:0x8
  0004  STX_32       fp+0, this+4, this+72 <Main.i>, 0, 8, 8
  000b  IDX          fp+0, this+0 <Main.d>, this+72 <Main.i>, 0, 8, 8
  0012  LDX_32       fp+8, this+4, this+76 <Main.k>, 0, 8, 8
  0019  STI_32       fp+0, 4, fp+8
  001d  LDX_N        this+64 <Main.t>, this+0 <Main.d>, this+72 <Main.i>, 0, 8, 8
  0024  IDX          fp+0, this+0 <Main.d>, this+72 <Main.i>, 0, 8, 8
  002b  LDX_N        fp+8, this+0 <Main.d>, this+76 <Main.k>, 0, 8, 8
  0032  STI_N        fp+0, fp+8, 8
  0036  STX_N        this+64 <Main.t>, this+0 <Main.d>, this+76 <Main.k>, 0, 8, 8
  003d  RET
)");
}

// With overflow traps the integer arithmetic of a value can trap, so the element is located
// first as written (IDX, then the value, then STI).
TEST(CodegenDisasm, ElementStoreKeepsSourceOrderWhenTheValueCanTrap) {
    CodegenOptions trap;
    trap.overflowTrap = true;
    Compiled c(R"(
PROGRAM Main
  VAR a : ARRAY [0..3] OF DINT; i : DINT; x : DINT; r : ARRAY [0..3] OF REAL; END_VAR
  a[i] := x + 1;
  r[i] := 10.0 / DINT_TO_REAL(x);
  a[i] := x / 2;
END_PROGRAM
)",
               trap);
    ASSERT_TRUE(c.ok) << c.rendered();
    const std::string code = c.code("Main");
    EXPECT_EQ(code.find("STX_"), std::string::npos) << code;
    EXPECT_NE(code.find("STI_32"), std::string::npos) << code;
}

// REAL x * y + z and z + x * y compute in one MULADD (the product rounded first, as MUL then
// ADD would); SQRT and SIN write straight into a destination of their type.
TEST(CodegenDisasm, RealMultiplyAddAndMathIntoTheDestination) {
    Compiled c(R"(
PROGRAM Main
  VAR a : REAL; b : REAL; s : REAL; l : LREAL; m : LREAL; END_VAR
  s := a * b + s;
  s := s + a * 0.5;
  l := l * 0.999 + m;
  s := SQRT(a * a + 1.0);
  l := SIN(m) * 0.5 + l / 3.0;
  m := SIN(l);
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(c.code("Main"), R"(  0000  MULADD_F32   this+8 <Main.s>, this+0 <Main.a>, this+4 <Main.b>, this+8 <Main.s>
  0005  MULADD_F32   this+8 <Main.s>, this+0 <Main.a>, g:0x8, this+8 <Main.s>
  000a  MULADD_F64   this+16 <Main.l>, this+16 <Main.l>, g:0x10, this+24 <Main.m>
  000f  MULADD_F32   fp+0, this+0 <Main.a>, this+0 <Main.a>, g:0x18
  0014  SQRT_F32     this+8 <Main.s>, fp+0
  0017  MATH_F64     fp+0, this+24 <Main.m>, 3
  001b  DIV_F64      fp+8, this+16 <Main.l>, g:0x28
  001f  MULADD_F64   this+16 <Main.l>, fp+0, g:0x20, fp+8
  0024  MATH_F64     this+24 <Main.m>, this+16 <Main.l>, 3
  0028  RET
)");
}

TEST(CodegenDisasm, OverflowTrapModeUsesCheckedInstructions) {
    CodegenOptions trap;
    trap.overflowTrap = true;
    Compiled c(R"(
PROGRAM Main
  VAR x : DINT; n : SINT; END_VAR
  x := x + 1;
  n := n + 1;
END_PROGRAM
)",
               trap);
    ASSERT_TRUE(c.ok) << c.rendered();
    EXPECT_TRUE(c.module.overflowTrap);
    const std::string code = c.code("Main");
    EXPECT_NE(code.find("ADD_I32_T"), std::string::npos) << code;
    EXPECT_NE(code.find("CHKR_I32"), std::string::npos) << code;
    EXPECT_EQ(code.find("ADD_I32_IMM"), std::string::npos) << code;
}

TEST(CodegenDisasm, DebugMapCoversStatementsAndTrappingInstructions) {
    Compiled c(R"(PROGRAM Main
  VAR a : DINT; b : DINT; END_VAR
  a := 1;
  b := 10 / a;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    std::vector<std::uint32_t> lines;
    for (const auto& d : c.module.debug) {
        lines.push_back(d.line);
    }
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines.front(), 3u);
    EXPECT_EQ(lines.back(), 4u);
    // The division (which traps on zero) has an entry of its own at line 4.
    const std::string code = c.code("Main");
    const std::size_t div = code.find("DIV_I32");
    ASSERT_NE(div, std::string::npos);
    const auto offset = static_cast<std::uint32_t>(std::stoul(code.substr(div - 6, 4), nullptr, 16));
    bool found = false;
    for (const auto& d : c.module.debug) {
        found = found || (d.codeOffset == offset && d.line == 4);
    }
    EXPECT_TRUE(found) << code;
}

TEST(CodegenDisasm, EnEnoGuardTheWholeStatementAndCostNothingWithout) {
    Compiled c(R"(
FUNCTION Twice : DINT
  VAR_INPUT a : DINT; END_VAR
  Twice := a * 2;
END_FUNCTION
PROGRAM Main
  VAR c : BOOL; ok : BOOL; t : DINT; u : DINT; END_VAR
  t := Twice(EN := c, a := t, ENO => ok);
  u := Twice(u);
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    // EN FALSE jumps over the arguments, the call and the assignment; ENO gets TRUE (g:0x10)
    // after the statement, FALSE (g:0x18) when skipped. The call without EN/ENO is unchanged.
    EXPECT_EQ(c.code("Main"), R"(  0009  JMP_F        this+0 <Main.c>, L001a
  000c  MOV_32       fp+4, this+4 <Main.t>
  000f  CALL_FN      Twice, 0
  0012  MOV_32       this+4 <Main.t>, fp+0
  0015  MOV_8        this+1 <Main.ok>, g:0x10
  0018  JMP          L001d
L001a:
  001a  MOV_8        this+1 <Main.ok>, g:0x18
L001d:
  001d  MOV_32       fp+4, this+8 <Main.u>
  0020  CALL_FN      Twice, 0
  0023  MOV_32       this+8 <Main.u>, fp+0
  0026  RET
)");
}

// Late binding costs only where an override can be reached: THIS^.M() in a base method is
// CALL_VIRT on the instance, a base VAR_IN_OUT is CALL_IFACE on the reference it already holds,
// each in place of one CALL_FB / CALL_FB_IND; a plain
// instance, an array element, SUPER^, a FINAL method and a hierarchy without overrides compile to
// CALL_FB / CALL_FB_IND as before.
TEST(CodegenDisasm, MethodCallsDispatchOnlyWhereAnOverrideCanRun) {
    Compiled c(R"(
FUNCTION_BLOCK Base
  METHOD M : INT  M := 1;  END_METHOD
  METHOD Twice : INT  Twice := THIS^.M() + M();  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Derived EXTENDS Base
  METHOD M : INT  M := SUPER^.M() + 1;  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Sealed EXTENDS Base
  METHOD FINAL M : INT  M := 4;  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Plain
  METHOD N : INT  N := 3;  END_METHOD
END_FUNCTION_BLOCK
FUNCTION ViaBase : INT
  VAR_IN_OUT b : Base; s : Sealed; p : Plain; END_VAR
  ViaBase := b.M() + s.M() + p.N();
END_FUNCTION
PROGRAM Main
  VAR d : Derived; s : Sealed; pl : Plain; r : INT; arr : ARRAY [1..2] OF Derived; k : INT := 1; END_VAR
  r := d.M() + ViaBase(d, s, pl) + arr[k].M();
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(c.code("Base.Twice"), R"(  0009  COPY         fp+0 <Twice>, g:0x28, 2
  000d  CALL_VIRT    this+0, 0, 8
  0011  SX_16_32     fp+16, fp+8
  0014  CALL_VIRT    this+0, 0, 24
  0018  SX_16_32     fp+32, fp+24
  001b  ADD_I32      fp+40, fp+16, fp+32
  001f  MOV_16       fp+0 <Twice>, fp+40
  0022  RET
)");
    EXPECT_EQ(c.code("Derived.M"), R"(  0024  COPY         fp+0 <M>, g:0x30, 2
  0028  CALL_FB      Base.M, this+0, 8
  002c  SX_16_32     fp+16, fp+8
  002f  ADD_I32_IMM  fp+20, fp+16, 1
  0033  MOV_16       fp+0 <M>, fp+20
  0036  RET
)");
    EXPECT_EQ(c.code("ViaBase"), R"(  0049  COPY         fp+0 <ViaBase>, g:0x58, 2
  004d  CALL_IFACE   fp+8 <b>, 0, 32
  0051  SX_16_32     fp+40, fp+32
  0054  CALL_FB_IND  Sealed.M, fp+16 <s>, 48
  0058  SX_16_32     fp+56, fp+48
  005b  ADD_I32      fp+64, fp+40, fp+56
  005f  CALL_FB_IND  Plain.N, fp+24 <p>, 72
  0063  SX_16_32     fp+80, fp+72
  0066  ADD_I32      fp+88, fp+64, fp+80
  006a  MOV_16       fp+0 <ViaBase>, fp+88
  006d  RET
)");
    EXPECT_EQ(c.code("Main"), R"(  006e  CALL_FB      Derived.M, this+0 <Main.d>, 0
  0072  SX_16_32     fp+8, fp+0
  0075  ADDR         fp+12, this+0 <Main.d>
  0078  ADDR         fp+16, this+4 <Main.s>
  007b  ADDR         fp+20, this+8 <Main.pl>
  007e  MOV_32       fp+32, fp+12
  0081  MOV_32       fp+40, fp+16
  0084  MOV_32       fp+48, fp+20
  0087  CALL_FN      ViaBase, 24
  008a  SX_16_32     fp+56, fp+24
  008d  ADD_I32      fp+64, fp+8, fp+56
  0091  SX_16_32     fp+68, this+20 <Main.k>
  0094  IDX          fp+72, this+12 <Main.arr>, fp+68, 1, 4, 2
  009b  CALL_FB_IND  Derived.M, fp+72, 80
  009f  SX_16_32     fp+88, fp+80
  00a2  ADD_I32      fp+96, fp+64, fp+88
  00a6  MOV_16       this+8 <Main.r>, fp+96
  00a9  RET
)");
}

} // namespace
} // namespace takt::compiler::test
