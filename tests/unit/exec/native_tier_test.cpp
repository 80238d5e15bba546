// The native execution tier against the interpreter: the same program on both tiers leaves the
// same state after every scan, faults with the same trap at the same instruction (so the same
// POU, line and column), and is stopped by the watchdog budget and the abort flag. Every test
// name holds "NativeTier" (ctest label `native`: ctest -L native).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "../../../bench/native/st_program.h"
#include "../../../runtime/native/src/fast_loops.h"
#include "../../../runtime/native/src/repeats.h"
#include "native_calls_program.h"
#include "support/compile_text.h"
#include "support/image_state.h"
#include "support/paths.h"
#include "takt/engine/engine.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Before every cycle the two tiers' stacks get different bytes, so a program that read scratch
// it had not written in the same call would show as a difference in state.
void scribbleStacks(LoadedProgram& interp, LoadedProgram& native, int cycle) {
    takt::test::scribbleStack(interp, static_cast<std::uint8_t>(0x5A + cycle));
    takt::test::scribbleStack(native, static_cast<std::uint8_t>(0xA5 - cycle));
}

// ---- the bench programs: the state after every scan ----------------------------------------

class NativeTierBench : public ::testing::TestWithParam<std::string> {};

TEST_P(NativeTierBench, SameImageAsInterpreterEveryScan) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const std::string path = std::string(TAKT_SOURCE_DIR) + "/bench/programs/" + GetParam() + ".st";
    bench::StProgram interp;
    bench::StProgram compiled;
    std::string error;
    ASSERT_TRUE(interp.load(path, error, Execution::Interpreter)) << error;
    ASSERT_TRUE(compiled.load(path, error, Execution::Native)) << error;
    EXPECT_EQ(interp.executionStatus(), "interpreter");
    for (int n = 0; n < 600; ++n) {
        scribbleStacks(interp.program(), compiled.program(), n);
        ASSERT_TRUE(interp.scan()) << interp.faultMessage();
        ASSERT_TRUE(compiled.scan()) << compiled.faultMessage();
        ASSERT_EQ(takt::test::stateOf(interp.program()), takt::test::stateOf(compiled.program()))
            << GetParam() << " after scan " << n + 1;
    }
    double a = 0;
    double b = 0;
    ASSERT_TRUE(interp.readLreal("check", a));
    ASSERT_TRUE(compiled.readLreal("check", b));
    EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(Programs, NativeTierBench,
                         ::testing::Values("int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// The tier compiles every bench program: a change is one users see in runtime.status.
TEST(NativeTierStatus, BenchProgramsCompiledOrExplained) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const auto status = [](const char* name) {
        bench::StProgram p;
        std::string error;
        EXPECT_TRUE(p.load(std::string(TAKT_SOURCE_DIR) + "/bench/programs/" + name + ".st", error, Execution::Native))
            << error;
        return p.executionStatus();
    };
    for (const char* name : {"int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"}) {
        EXPECT_EQ(status(name), "native") << name;
    }
}

// ---- the math functions: the interpreter's libm results, bit for bit, also on constants ------

// LLVM folds a libm call on a constant itself, and for the REAL (float) functions it computes
// in double and rounds, which can differ from the libm float function in the last bit
// (TAN(REAL#-2.5) did). The tier calls what the interpreter calls, constant or not.
constexpr const char* kMath = R"(
PROGRAM p
VAR r : ARRAY[0..15] OF REAL; l : ARRAY[0..11] OF LREAL; x : REAL := -2.5; n : DINT; END_VAR
n := n + 1;
r[0] := TAN(REAL#-2.5); r[1] := SIN(REAL#1.1); r[2] := COS(REAL#2.7); r[3] := EXP(REAL#3.3);
r[4] := LN(REAL#7.7); r[5] := LOG(REAL#0.3); r[6] := ASIN(REAL#0.61); r[7] := ACOS(REAL#-0.42);
r[8] := ATAN(REAL#9.5); r[9] := EXPT(REAL#2.0, REAL#0.37); r[10] := EXPT(REAL#1.7, REAL#3.1);
r[11] := TAN(x); r[12] := SIN(x * DINT_TO_REAL(n)); r[13] := EXPT(REAL#2.0, x);
r[14] := ATAN2(REAL#1.3, REAL#-0.4); r[15] := EXP(x + REAL#9.9);
l[0] := TAN(LREAL#-2.5); l[1] := SIN(LREAL#1.1); l[2] := COS(LREAL#2.7); l[3] := EXP(LREAL#3.3);
l[4] := LN(LREAL#7.7); l[5] := LOG(LREAL#0.3); l[6] := ASIN(LREAL#0.61); l[7] := ACOS(LREAL#-0.42);
l[8] := ATAN(LREAL#9.5); l[9] := EXPT(LREAL#2.0, LREAL#0.37); l[10] := EXPT(LREAL#1.7, LREAL#3.1);
l[11] := ATAN2(LREAL#1.3, LREAL#-0.4);
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

// ---- traps: same trap, same instruction, same image ---------------------------------------

struct TierRun {
    std::unique_ptr<LoadedProgram> program;
    std::unique_ptr<VmRunner> runner;
};

TierRun start(const takt::test::CompiledText& compiled, Execution execution, std::uint64_t budget = 0) {
    TierRun r;
    r.program = std::make_unique<LoadedProgram>(compiled.program.module, "");
    r.runner = std::make_unique<VmRunner>(budget, execution);
    r.runner->attach(*r.program);
    Fault fault;
    EXPECT_TRUE(compiled.program.module->initCode == bytecode::kNone || r.runner->runInit(*r.program, fault));
    return r;
}

// Runs `cycles` cycles of the first program on both tiers; both must fault in the last one,
// with the same fault, at the same source position, over the same image.
// `message`: the native tier's fault.
void expectSameFault(const std::string& text, int cycles, bool overflowTrap, std::uint64_t budget,
                     std::string& message) {
    compiler::CodegenOptions options;
    options.overflowTrap = overflowTrap;
    const takt::test::CompiledText compiled = takt::test::compileText(text, options);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    TierRun interp = start(compiled, Execution::Interpreter, budget);
    TierRun nat = start(compiled, Execution::Native, budget);
    ASSERT_EQ(nat.runner->executionStatus(), "native");
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    Fault fi;
    Fault fn;
    for (int c = 0; c < cycles; ++c) {
        const bool last = c + 1 == cycles;
        ASSERT_EQ(interp.runner->runProgram(*interp.program, inst, c, fi), !last) << "interpreter, cycle " << c;
        ASSERT_EQ(nat.runner->runProgram(*nat.program, inst, c, fn), !last) << "native, cycle " << c;
    }
    message = fn.message;
    EXPECT_EQ(fn.message, fi.message);
    EXPECT_EQ(fn.pou, fi.pou);
    EXPECT_EQ(fn.codeOffset, fi.codeOffset);
    const FaultReport ri = interp.program->describe(fi);
    const FaultReport rn = nat.program->describe(fn);
    EXPECT_EQ(rn.pou, ri.pou);
    EXPECT_EQ(rn.line, ri.line);
    EXPECT_EQ(rn.column, ri.column);
    EXPECT_NE(ri.line, 0u);
    EXPECT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program));
}

TEST(NativeTierTraps, WrapModeDoesNotTrap) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const takt::test::CompiledText compiled = takt::test::compileText(R"(
PROGRAM p
VAR x : DINT := 2147483647; n : INT := 32767; m : LINT := 9223372036854775807; END_VAR
x := x + 1;
n := n + 1;
m := m * 2 + 1;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered();
    TierRun interp = start(compiled, Execution::Interpreter);
    TierRun nat = start(compiled, Execution::Native);
    ASSERT_EQ(nat.runner->executionStatus(), "native");
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    Fault f;
    ASSERT_TRUE(interp.runner->runProgram(*interp.program, inst, 0, f));
    ASSERT_TRUE(nat.runner->runProgram(*nat.program, inst, 0, f)) << f.message;
    EXPECT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program));
}

// ---- calls: FUNCTION, FB, METHOD (direct, virtual, through an interface), native FBs and ----
//      functions, strings (native_calls_program.h); the image after every cycle -----------------

// Runs `cycles` cycles of the first program on both tiers, the clock advancing `stepNs` a cycle;
// the state must agree after every one (each tier's stack gets different bytes before it).
void expectSameImageEveryCycle(const char* source, int cycles, std::int64_t stepNs) {
    const takt::test::CompiledText compiled = takt::test::compileText(source);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    TierRun interp = start(compiled, Execution::Interpreter);
    TierRun nat = start(compiled, Execution::Native);
    ASSERT_EQ(nat.runner->executionStatus(), "native");
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    Fault f;
    for (int c = 0; c < cycles; ++c) {
        const std::int64_t now = std::int64_t{c} * stepNs;
        scribbleStacks(*interp.program, *nat.program, c);
        // The wall clock (NOW_DT(), RTC) a second ahead of the cycle clock, moving with it.
        interp.runner->setWallClock(engine::kVirtualWallEpochNs + 1'000'000'000 + now);
        nat.runner->setWallClock(engine::kVirtualWallEpochNs + 1'000'000'000 + now);
        ASSERT_TRUE(interp.runner->runProgram(*interp.program, inst, now, f)) << f.message;
        ASSERT_TRUE(nat.runner->runProgram(*nat.program, inst, now, f)) << f.message;
        ASSERT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program)) << "after cycle " << c + 1;
    }
}

TEST(NativeTierCalls, SameImageAsInterpreterEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kCalls, 60, 1'000'000);
}

TEST(NativeTierMath, LibmResultsBitForBitOnConstantsAndVariables) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kMath, 4, 1'000'000);
}

// ---- the standard FBs: every one, in several widths (so several instance layouts, each its
//      own compiled copy), as a program variable, inside an FB and in an array --------------------

constexpr const char* kStandardFbs = R"(
FUNCTION_BLOCK Stage
VAR_INPUT go : BOOL; END_VAR
VAR_OUTPUT done : BOOL; END_VAR
VAR inner : TON; edge : F_TRIG; END_VAR
inner(IN := go, PT := T#4ms);
edge(CLK := inner.Q);
done := edge.Q;
END_FUNCTION_BLOCK
PROGRAM p
VAR
  n : DINT; a, b, c : BOOL;
  ton1 : TON; lton1 : LTON; tof1 : TOF; tp1 : TP; ltp1 : LTP;
  rt : R_TRIG; ft : F_TRIG; sr1 : SR; rs1 : RS;
  cu : CTU; cuDint : CTU_DINT; cuUdint : CTU_UDINT; cd : CTD; cdLint : CTD_LINT; cud : CTUD; cudDint : CTUD_DINT;
  stage : Stage; stages : ARRAY[0..2] OF Stage; timers : ARRAY[0..3] OF TON; k : INT;
  outs : ARRAY[0..15] OF BOOL; counts : ARRAY[0..7] OF LINT; times : ARRAY[0..4] OF LINT;
  clock : RTC; clocks : ARRAY[0..1] OF RTC; now : DT; lnow : LDT;
END_VAR
n := n + 1;
a := n MOD 7 < 4; b := n MOD 5 = 0; c := n MOD 11 > 6;
ton1(IN := a, PT := T#3ms); lton1(IN := c, PT := LT#2ms);
tof1(IN := a, PT := T#2ms); tp1(IN := b, PT := T#3ms); ltp1(IN := c, PT := LT#5ms);
rt(CLK := a); ft(CLK := c); sr1(S1 := b, RESET := c); rs1(SET := a, R1 := b);
cu(CU := a, RESET := n MOD 23 = 0, PV := 4); cuDint(CU := b, RESET := c AND b, PV := 2);
cuUdint(CU := c, RESET := FALSE, PV := 3); cd(CD := a, LOAD := n MOD 17 = 0, PV := 5);
cdLint(CD := b, LOAD := n MOD 13 = 0, PV := 2);
cud(CU := a, CD := b, RESET := n MOD 29 = 0, LOAD := n MOD 19 = 0, PV := 3);
cudDint(CU := c, CD := a, RESET := FALSE, LOAD := n MOD 31 = 0, PV := 6);
stage(go := a);
FOR k := 0 TO 2 DO stages[k](go := (n + k) MOD 6 < 3); END_FOR;
FOR k := 0 TO 3 DO timers[k](IN := (n + k) MOD 9 < 5, PT := INT_TO_TIME(k + 1)); END_FOR;
outs[0] := ton1.Q; outs[1] := lton1.Q; outs[2] := tof1.Q; outs[3] := tp1.Q; outs[4] := ltp1.Q;
outs[5] := rt.Q; outs[6] := ft.Q; outs[7] := sr1.Q1; outs[8] := rs1.Q1; outs[9] := cu.Q;
outs[10] := cud.QU; outs[11] := cud.QD; outs[12] := stage.done; outs[13] := stages[1].done;
outs[14] := timers[3].Q; outs[15] := cd.Q;
counts[0] := cu.CV; counts[1] := cuDint.CV; counts[2] := cuUdint.CV; counts[3] := cd.CV;
counts[4] := cdLint.CV; counts[5] := cud.CV; counts[6] := cudDint.CV; counts[7] := BOOL_TO_LINT(cdLint.Q);
times[0] := TIME_TO_LINT(ton1.ET); times[1] := LTIME_TO_LINT(lton1.ET); times[2] := TIME_TO_LINT(tof1.ET);
times[3] := TIME_TO_LINT(tp1.ET); times[4] := LTIME_TO_LINT(ltp1.ET);
now := NOW_DT(); lnow := NOW_LDT();
clock(IN := b OR c, PDT := DT#2030-06-01-12:00:00);
FOR k := 0 TO 1 DO clocks[k](IN := (n + k) MOD 4 < 2, PDT := now + INT_TO_TIME(k * 1000)); END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierStandardFbs, EveryFbEveryLayoutSameImageEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    // 700 µs steps: the timers see elapsed times between and on their presets.
    expectSameImageEveryCycle(kStandardFbs, 200, 700'000);
}

// ---- frames: temporaries of PROGRAMs and FBs, a reference to a temporary, FUNCTION arguments
//      in the caller's frame, a frame over 4 KB; the state after every cycle --------------------

constexpr const char* kFrames = R"(
FUNCTION Add3 : DINT
VAR_INPUT a, b, c : DINT; END_VAR
Add3 := a + b + c;
END_FUNCTION
FUNCTION_BLOCK Temps
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR_TEMP t : DINT; u : ARRAY[0..7] OF DINT; k : INT; END_VAR
t := t + x;
FOR k := 0 TO 7 DO u[k] := t * k + u[k]; END_FOR;
y := u[7] - u[3] + t;
END_FUNCTION_BLOCK
FUNCTION_BLOCK Escapes
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR_TEMP t : DINT; r : REF_TO DINT; END_VAR
t := x * 3;
r := REF(t);
r^ := r^ + 1;
y := Add3(t, x, r^);
END_FUNCTION_BLOCK
FUNCTION_BLOCK Big
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR_TEMP big : ARRAY[0..1199] OF DINT; k : INT; END_VAR
FOR k := 0 TO 1199 DO big[k] := x + k; END_FOR;
y := big[1199] - big[17];
END_FUNCTION_BLOCK
PROGRAM p
VAR n : DINT; a : Temps; b : Escapes; c : Big; s : DINT; END_VAR
VAR_TEMP q : DINT; END_VAR
n := n + 1;
q := n * 2;
a(x := q);
b(x := n);
c(x := n);
s := s + a.y + b.y + c.y + Add3(q, n, 1);
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierFrames, TemporariesReferencesAndArgumentsSameImageEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kFrames, 40, 1'000'000);
}

// ---- FOR loops whose back-edges skip the budget check (fast_loops.h) ------------------------

constexpr const char* kLoops = R"(
FUNCTION Twice : DINT
VAR_INPUT v : DINT; END_VAR
Twice := v * 2;
END_FUNCTION
PROGRAM p
VAR i, j, k, m, n : DINT; s : DINT; x : INT; a : ARRAY[0..19] OF DINT; r : REF_TO DINT; END_VAR
FOR i := 1 TO 100 DO s := s + i; END_FOR;
FOR j := 1 TO 10 DO
  FOR k := 1 TO 20 DO s := s + k; END_FOR;
END_FOR;
r := REF(m);
FOR m := 1 TO 30 DO r^ := r^ + 0; s := s + 1; END_FOR;
FOR n := 1 TO 50 DO s := s + Twice(n); END_FOR;
FOR x := 0 TO 19 DO a[x] := x * 2; END_FOR;
FOR n := 1 TO 8 DO s := s + n; END_FOR;
FOR i := 0 TO 39 DO
  FOR j := 0 TO 7 DO s := s + j; END_FOR;
END_FOR;
FOR i := 0 TO 39 DO
  IF (i MOD 3) = 0 THEN FOR j := 0 TO 7 DO s := s + j; END_FOR; END_IF;
END_FOR;
FOR i := 0 TO 39 DO
  FOR j := i TO 50 DO s := s + 1; END_FOR;
END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierFastLoops, CountedInnermostLoopsQualifyOthersDoNot) {
    const takt::test::CompiledText compiled = takt::test::compileText(kLoops);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    const bytecode::Module& module = *compiled.program.module;
    const bytecode::ProgramInstance& inst = module.programs.front();
    const bytecode::PouEntry& body = module.pous[inst.pou];
    std::vector<bool> starts(module.code.size(), false);
    for (std::uint32_t pc = body.code; pc < body.codeEnd;
         pc += bytecode::instructionLength(static_cast<bytecode::Opcode>(module.code[pc]))) {
        starts[pc] = true;
    }
    const LoadedProgram program(compiled.program.module, "");
    std::vector<std::uint32_t> lines;
    for (const native::FastLoop& loop : native::fastLoops(module, starts, true)) {
        Fault at;
        at.pou = inst.pou;
        at.codeOffset = loop.head;
        lines.push_back(program.describe(at).line);
        EXPECT_GE(loop.maxTrips, 64u);
    }
    // (A loop's head is the first instruction of its body.) The loop over i (line 8), the inner
    // loop over k (10), the INT loop storing into an array beside its counter (15), the loops
    // around a loop of 8 (lines 17 and 20, heads on 18 and 21: one trip takes 8 back-edges at
    // most, inside an IF too) and the inner loop of unknown trips (24). Not: the outer loop over
    // j (10 trips: LLVM unrolls it), the loop storing through a reference (13), the loop calling
    // a function (14), the loop of 8 (16), the loop around a loop of unknown trips (23).
    EXPECT_EQ(lines, (std::vector<std::uint32_t>{8, 10, 15, 18, 21, 24}));
    std::vector<std::uint32_t> perTrip;
    for (const native::FastLoop& loop : native::fastLoops(module, starts, true)) {
        perTrip.push_back(loop.backEdgesPerTrip);
    }
    EXPECT_EQ(perTrip, (std::vector<std::uint32_t>{1, 1, 1, 8, 8, 1}));
    // In a body whose instance may overlap its frame, the INT loop's frame counter is no longer
    // apart from the instance it stores into, nor the counter of line 20 from the frame
    // temporary its IF tests.
    lines.clear();
    for (const native::FastLoop& loop : native::fastLoops(module, starts, false)) {
        Fault at;
        at.pou = inst.pou;
        at.codeOffset = loop.head;
        lines.push_back(program.describe(at).line);
    }
    EXPECT_EQ(lines, (std::vector<std::uint32_t>{8, 10, 18, 24}));
}

// Runs of repeated calls (repeats.h): ten TON/R_TRIG pairs with an edge count (lines 13-22, PT
// from a table, the instances and the array elements a constant step apart) are rolled into one
// loop; the eight user FB calls, the five pairs (too few) and the pairs inside a FOR loop are not.
constexpr const char* kRepeats = R"(FUNCTION_BLOCK Acc
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := y + x;
END_FUNCTION_BLOCK
PROGRAM p
VAR
  t : ARRAY[0..9] OF TON; e : ARRAY[0..9] OF R_TRIG; u : ARRAY[0..4] OF TON;
  a0, a1, a2, a3, a4, a5, a6, a7 : Acc;
  inp : ARRAY[0..9] OF BOOL; n, k, fired : DINT; q : TIME;
END_VAR
n := n + 1; FOR k := 0 TO 9 DO inp[k] := ((n + k) MOD 7) < 4; END_FOR;
t[0](IN := inp[0], PT := T#2ms); e[0](CLK := t[0].Q); IF e[0].Q THEN fired := fired + 1; END_IF;
t[1](IN := inp[1], PT := T#5ms); e[1](CLK := t[1].Q); IF e[1].Q THEN fired := fired + 1; END_IF;
t[2](IN := inp[2], PT := T#3ms); e[2](CLK := t[2].Q); IF e[2].Q THEN fired := fired + 1; END_IF;
t[3](IN := inp[3], PT := T#1ms); e[3](CLK := t[3].Q); IF e[3].Q THEN fired := fired + 1; END_IF;
t[4](IN := inp[4], PT := T#4ms); e[4](CLK := t[4].Q); IF e[4].Q THEN fired := fired + 1; END_IF;
t[5](IN := inp[5], PT := T#2ms); e[5](CLK := t[5].Q); IF e[5].Q THEN fired := fired + 1; END_IF;
t[6](IN := inp[6], PT := T#6ms); e[6](CLK := t[6].Q); IF e[6].Q THEN fired := fired + 1; END_IF;
t[7](IN := inp[7], PT := T#3ms); e[7](CLK := t[7].Q); IF e[7].Q THEN fired := fired + 1; END_IF;
t[8](IN := inp[8], PT := T#7ms); e[8](CLK := t[8].Q); IF e[8].Q THEN fired := fired + 1; END_IF;
t[9](IN := inp[9], PT := T#1ms); e[9](CLK := t[9].Q); IF e[9].Q THEN fired := fired + 1; END_IF;
a0(x := n); a1(x := n); a2(x := n); a3(x := n); a4(x := n); a5(x := n); a6(x := n); a7(x := n);
u[0](IN := inp[0], PT := T#2ms); q := u[0].ET;
u[1](IN := inp[1], PT := T#2ms); q := u[1].ET;
u[2](IN := inp[2], PT := T#2ms); q := u[2].ET;
u[3](IN := inp[3], PT := T#2ms); q := u[3].ET;
u[4](IN := inp[4], PT := T#2ms); q := u[4].ET;
FOR k := 0 TO 1 DO
  t[0](IN := inp[0]); t[1](IN := inp[1]); t[2](IN := inp[2]); t[3](IN := inp[3]); t[4](IN := inp[4]);
  t[5](IN := inp[5]); t[6](IN := inp[6]); t[7](IN := inp[7]); t[8](IN := inp[8]); t[9](IN := inp[9]);
END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierRepeats, RunsOfStandardFbCallsQualifyOthersDoNot) {
    const takt::test::CompiledText compiled = takt::test::compileText(kRepeats);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    const bytecode::Module& module = *compiled.program.module;
    const bytecode::ProgramInstance& inst = module.programs.front();
    const bytecode::PouEntry& body = module.pous[inst.pou];
    std::vector<bool> starts(module.code.size() + 1, false);
    for (std::uint32_t pc = body.code; pc < body.codeEnd;
         pc += bytecode::instructionLength(static_cast<bytecode::Opcode>(module.code[pc]))) {
        starts[pc] = true;
    }
    const std::vector<native::RepeatRun> runs = native::repeatRuns(module, body.code, body.codeEnd, starts);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].count, 10u);
    const LoadedProgram program(compiled.program.module, "");
    Fault at;
    at.pou = inst.pou;
    at.codeOffset = runs[0].start;
    EXPECT_EQ(program.describe(at).line, 13u);
    at.codeOffset = runs[0].end();
    EXPECT_EQ(program.describe(at).line, 23u);
    // The words that differ: the input element, the TON's IN, PT, PT's value (its low word), the
    // TON in the call, its Q, the R_TRIG's CLK, the R_TRIG in the call, its Q.
    EXPECT_EQ(runs[0].varying.size(), 9u);
}

TEST(NativeTierRepeats, RolledRunsSameImageAsInterpreterEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kRepeats, 120, 1'000'000);
}

// The smallest budget with which the interpreter's first cycle faults on `line` or after it, or
// not at all (the ticks spent before the line, plus one), by bisection up to `most`.
std::uint64_t firstBudgetReaching(const takt::test::CompiledText& compiled, std::uint32_t line, std::uint64_t most) {
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    std::uint64_t low = 1;
    std::uint64_t high = most;
    while (low < high) {
        const std::uint64_t mid = low + (high - low) / 2;
        TierRun run = start(compiled, Execution::Interpreter, mid);
        Fault f;
        if (run.runner->runProgram(*run.program, inst, 0, f) || run.program->describe(f).line >= line) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    return low;
}

TEST(NativeTierFastLoops, EveryBudgetEndsAtTheSameInstructionOverTheSameImage) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const takt::test::CompiledText compiled = takt::test::compileText(kLoops);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    // Small ones, then across the run (about 2,200 ticks: the first loop takes 99, the nested
    // ones 209, the loops around loops of 8 319 and 137, the last 1,259); 0 is unlimited.
    std::vector<std::uint64_t> budgets{0};
    for (std::uint64_t b = 1; b <= 8; ++b) {
        budgets.push_back(b);
    }
    for (std::uint64_t b = 90; b <= 560; b += 13) {
        budgets.push_back(b);
    }
    for (std::uint64_t b = 561; b <= 2300; b += 29) {
        budgets.push_back(b);
    }
    // Each loop around a loop of 8 (lines 17 and 20: 40 trips of at most 8 ticks) takes its
    // unchecked copy only when the ticks left at its entry cover 320; a bound one trip short (313)
    // differs only within those 8 ticks, so every budget that leaves 300 to 330 at the entry.
    for (const std::uint32_t line : {17U, 20U}) {
        const std::uint64_t entry = firstBudgetReaching(compiled, line, 2300);
        for (std::uint64_t b = entry + 300; b <= entry + 330; ++b) {
            budgets.push_back(b);
        }
    }
    for (const std::uint64_t budget : budgets) {
        TierRun interp = start(compiled, Execution::Interpreter, budget);
        TierRun nat = start(compiled, Execution::Native, budget);
        ASSERT_EQ(nat.runner->executionStatus(), "native");
        for (int c = 0; c < 3; ++c) {
            Fault fi;
            Fault fn;
            scribbleStacks(*interp.program, *nat.program, c);
            const bool okInterp = interp.runner->runProgram(*interp.program, inst, c, fi);
            const bool okNative = nat.runner->runProgram(*nat.program, inst, c, fn);
            ASSERT_EQ(okNative, okInterp) << "budget " << budget << ", cycle " << c;
            EXPECT_EQ(fn.message, fi.message) << "budget " << budget;
            EXPECT_EQ(fn.codeOffset, fi.codeOffset) << "budget " << budget;
            ASSERT_EQ(takt::test::stateOf(*nat.program), takt::test::stateOf(*interp.program))
                << "budget " << budget << ", cycle " << c;
            if (!okInterp) {
                break;
            }
        }
    }
}

// Each round of the outer loop takes 64 ticks (63 unchecked back-edges and its own), so its own
// back-edge always sees the same ticks modulo 64: only the fast entry's poll sees the flag.
constexpr const char* kRoundsOf64 = R"(
PROGRAM p
VAR n, k, s : DINT; END_VAR
WHILE n < 100000 DO
  FOR k := 0 TO 63 DO s := s + k; END_FOR;
  n := n + 1;
END_WHILE;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierFastLoops, AbortFlagSeenAroundUncheckedLoops) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const takt::test::CompiledText compiled = takt::test::compileText(kRoundsOf64);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    for (const Execution execution : {Execution::Interpreter, Execution::Native}) {
        TierRun run = start(compiled, execution);
        const std::atomic<bool> abort{true};
        run.runner->setAbortFlag(&abort);
        Fault f;
        ASSERT_FALSE(run.runner->runProgram(*run.program, compiled.program.module->programs.front(), 0, f))
            << run.runner->executionStatus();
        EXPECT_EQ(f.message, vm::trapMessage(vm::Trap::Aborted)) << run.runner->executionStatus();
    }
}

// ---- the watchdog: WHILE TRUE is caught by the budget and by the abort flag ---------------

constexpr const char* kEndless = R"(
PROGRAM p
VAR n : DINT; END_VAR
WHILE TRUE DO
  n := n + 1;
END_WHILE;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierWatchdog, WhileTrueStopsOnTheAbortFlag) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const takt::test::CompiledText compiled = takt::test::compileText(kEndless);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered();
    TierRun nat = start(compiled, Execution::Native);
    ASSERT_EQ(nat.runner->executionStatus(), "native");
    const std::atomic<bool> abort{true}; // as the watchdog thread leaves it at its timeout
    nat.runner->setAbortFlag(&abort);
    Fault f;
    ASSERT_FALSE(nat.runner->runProgram(*nat.program, compiled.program.module->programs.front(), 0, f));
    EXPECT_EQ(f.message, vm::trapMessage(vm::Trap::Aborted));
    EXPECT_EQ(nat.program->describe(f).line, 5u);
}

// ---- faults: the same trap at the same instruction on both tiers (one case per row) --------

struct FaultCase {
    const char* name;
    const char* source;
    int cycles; // the last one faults
    bool overflowTrap;
    std::uint64_t budget;
    vm::Trap trap;
};

const FaultCase kFaultCases[] = {
    {"DivisionByZero", R"(
PROGRAM p
VAR a : DINT := 10; b : DINT := 3; q : DINT; n : DINT; END_VAR
n := n + 1;
b := b - 1;
q := q + a / b;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     3, false, 0, vm::Trap::DivByZero},
    {"ModByZeroLint", R"(
PROGRAM p
VAR a : LINT := 10; b : LINT := 2; q : LINT; END_VAR
b := b - 1;
q := q + a MOD b;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     2, false, 0, vm::Trap::DivByZero},
    {"ArrayBounds", R"(
PROGRAM p
VAR arr : ARRAY[1..4] OF DINT; i : DINT; s : DINT; END_VAR
i := i + 1;
arr[i] := i;
s := s + arr[i];
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     5, false, 0, vm::Trap::ArrayBounds},
    {"ForStepZero", R"(
PROGRAM p
VAR k : DINT; st : DINT := 2; s : DINT; END_VAR
st := st - 1;
FOR k := 1 TO 10 BY st DO
  s := s + k;
END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     2, false, 0, vm::Trap::ForStepZero},
    {"NullReference", R"(
PROGRAM p
VAR r : REF_TO DINT; x : DINT; y : DINT; END_VAR
x := x + 1;
y := y + r^;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     1, false, 0, vm::Trap::NullReference},
    {"OverflowInTrapMode", R"(
PROGRAM p
VAR x : DINT := 2147483640; n : INT := 32760; END_VAR
n := n + 1;
x := x + 1;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     8, true, 0, vm::Trap::Overflow},
    // A trap inside a callee names the callee's line, on both tiers.
    {"DivisionByZeroInsideAFunctionCalledFromAMethod", R"(
FUNCTION Ratio : DINT
VAR_INPUT a, b : DINT; END_VAR
Ratio := a / b;
END_FUNCTION
FUNCTION_BLOCK Meter
VAR_INPUT d : DINT; END_VAR
VAR last : DINT; END_VAR
METHOD Read : DINT
  last := Ratio(100, d);
  Read := last;
END_METHOD
END_FUNCTION_BLOCK
PROGRAM p
VAR m : Meter; n, r : DINT; END_VAR
n := n + 1;
m.d := 3 - n;
r := m.Read();
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     3, false, 0, vm::Trap::DivByZero},
    // Calls through an interface cannot be checked for recursion by the compiler: past the call
    // depth limit both tiers stop with StackOverflow at the same call.
    {"StackOverflowThroughInterfaceRecursion", R"(
INTERFACE INode
METHOD Walk : DINT
VAR_INPUT n : DINT; END_VAR
END_METHOD
END_INTERFACE
FUNCTION_BLOCK Node IMPLEMENTS INode
VAR_INPUT next : INode; END_VAR
METHOD Walk : DINT
VAR_INPUT n : DINT; END_VAR
  IF n <= 0 THEN
    Walk := 0;
  ELSE
    Walk := next.Walk(n - 1) + 1;
  END_IF;
END_METHOD
END_FUNCTION_BLOCK
PROGRAM p
VAR a : Node; depth, r : DINT; END_VAR
a.next := a;
depth := depth + 200;
r := a.Walk(depth);
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     2, false, 0, vm::Trap::StackOverflow},
    {"WhileTrueStopsAtTheSameTickAsTheInterpreter", kEndless, 1, false, 100'000, vm::Trap::BudgetExceeded},
    // Calls charge the budget as back-edges do: a loop of calls stops at the same call.
    {"CallsChargeTheBudgetAsInTheInterpreter", R"(
FUNCTION Inc : DINT
VAR_INPUT x : DINT; END_VAR
Inc := x + 1;
END_FUNCTION
PROGRAM p
VAR n : DINT; END_VAR
WHILE TRUE DO
  n := Inc(n);
  n := Inc(n);
END_WHILE;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
     1, false, 10'001, vm::Trap::BudgetExceeded},
};

class NativeTierFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(NativeTierFaults, SameTrapSameInstructionSameImage) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const FaultCase& c = GetParam();
    std::string message;
    expectSameFault(c.source, c.cycles, c.overflowTrap, c.budget, message);
    EXPECT_EQ(message, vm::trapMessage(c.trap));
}

INSTANTIATE_TEST_SUITE_P(Cases, NativeTierFaults, ::testing::ValuesIn(kFaultCases),
                         [](const ::testing::TestParamInfo<FaultCase>& param) {
                             return std::string(param.param.name);
                         });

// ---- what is not translated runs on the interpreter, and says where ----------------------

// An instruction the translator does not handle (a new opcode before it gets an emitter; here
// one the test leaves out) sends the whole program to the interpreter, which says where.
TEST(NativeTierStatus, UntranslatedInstructionFallsBackNamingIt) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const takt::test::CompiledText compiled = takt::test::compileText(R"(
PROGRAM p
VAR t : TON; go : BOOL; END_VAR
go := NOT go;
t(IN := go, PT := T#5ms);
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered();
    const bytecode::Opcode callFb[] = {bytecode::Opcode::CALL_FB};
    const native::CompileResult result = native::compile(*compiled.program.module, {}, callFb);
    EXPECT_EQ(result.code, nullptr);
    const LoadedProgram program(compiled.program.module, "");
    EXPECT_EQ(nativeFallbackStatus(program.module(), result), "interpreter (native: unsupported CALL_FB at p:5)");
    // With the machine's standard FBs their C++ is linked in for LLVM to inline (clang 14's
    // bitcode of them is part of every build with the tier).
    Bytes image(vm::Vm::requiredImageSize(*compiled.program.module));
    const vm::Vm machine(*compiled.program.module, image);
    const native::CompileResult linked = native::compile(*compiled.program.module, directFbsOf(machine));
    EXPECT_NE(linked.code, nullptr) << linked.error;
    EXPECT_TRUE(linked.standardFbsLinked);
    // Without them (no DirectFb) the call of TON is not translated.
    EXPECT_EQ(native::compile(*compiled.program.module).unsupportedPc, result.unsupportedPc);
    EXPECT_EQ(start(compiled, Execution::Native).runner->executionStatus(), "native");
}

// Globals and instances move as `unordered` atomic accesses only in a program with two or more
// tasks, which other threads may run; a one-task program keeps plain accesses, which LLVM folds
// across inlined FB bodies (docs/language-notes.md, "What is atomic").
TEST(NativeTierShared, AtomicAccessesOnlyWhereTwoTasksShareTheImage) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const std::string body = R"(
VAR_GLOBAL total : LINT; END_VAR
PROGRAM p
VAR_EXTERNAL total : LINT; END_VAR
total := total + 1;
END_PROGRAM
)";
    const auto irOf = [&](const std::string& configuration) {
        const takt::test::CompiledText compiled = takt::test::compileText(body + configuration);
        EXPECT_TRUE(compiled.program.ok()) << compiled.rendered();
        const std::filesystem::path prefix =
            std::filesystem::temp_directory_path() / ("takt_native_shared_" + std::to_string(::getpid()));
        ::setenv("TAKT_NATIVE_DUMP", prefix.c_str(), 1);
        const native::CompileResult result = native::compile(*compiled.program.module);
        ::unsetenv("TAKT_NATIVE_DUMP");
        EXPECT_NE(result.code, nullptr) << result.error;
        std::ifstream in(prefix.string() + ".ll");
        std::string ir((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::filesystem::remove(prefix.string() + ".ll");
        std::filesystem::remove(prefix.string() + ".opt.ll");
        return ir;
    };
    const std::string one = irOf("CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); "
                                 "PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION");
    const std::string two = irOf("CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); "
                                 "TASK u(INTERVAL := T#5ms); PROGRAM i WITH t : p; PROGRAM k WITH u : p; "
                                 "END_RESOURCE END_CONFIGURATION");
    ASSERT_FALSE(one.empty());
    ASSERT_FALSE(two.empty());
    EXPECT_EQ(one.find("load atomic i64"), std::string::npos);
    EXPECT_EQ(one.find("store atomic i64"), std::string::npos);
    EXPECT_NE(two.find("load atomic i64"), std::string::npos) << two;
    EXPECT_NE(two.find("store atomic i64"), std::string::npos) << two;
    EXPECT_NE(two.find("unordered, align 8"), std::string::npos) << two;
}

// The optimised IR of `source`'s PROGRAM p (TAKT_NATIVE_DUMP), its body alone.
std::string optimisedBodyOfP(const std::string& source, const char* name) {
    const takt::test::CompiledText compiled = takt::test::compileText(source);
    EXPECT_TRUE(compiled.program.ok()) << compiled.rendered();
    const std::filesystem::path prefix =
        std::filesystem::temp_directory_path() / (std::string(name) + "_" + std::to_string(::getpid()));
    ::setenv("TAKT_NATIVE_DUMP", prefix.c_str(), 1);
    const native::CompileResult result = native::compile(*compiled.program.module);
    ::unsetenv("TAKT_NATIVE_DUMP");
    EXPECT_NE(result.code, nullptr) << result.error;
    std::ifstream in(prefix.string() + ".opt.ll");
    const std::string ir((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(prefix.string() + ".ll");
    std::filesystem::remove(prefix.string() + ".opt.ll");
    const std::size_t program = ir.find("define i32 @takt.body.p(");
    if (program == std::string::npos) {
        ADD_FAILURE() << ir;
        return {};
    }
    return ir.substr(program, ir.find("\n}", program) - program);
}

// Literal inputs of an FB call reach the inlined body as constants, for every instance: the
// compiler copies a run of literal inputs from the constants in one COPY, which the tier stores as
// immediates (a memmove from the image hid them), and the instance at a distance from the
// program's `this` is addressed from it at a constant offset (GVN forwards the stored inputs to
// the body's loads only from a common base). So the optimised program multiplies by the literals.
TEST(NativeTierShared, LiteralInputsOfEveryInstanceAreFoldedIntoTheInlinedBody) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const std::string body = optimisedBodyOfP(R"(
FUNCTION_BLOCK Scale
VAR_INPUT x : DINT; k : DINT; m : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := x * k + m;
END_FUNCTION_BLOCK
PROGRAM p
VAR a : Scale; b : Scale; v : DINT; r : DINT; END_VAR
v := v + 1;
a(x := v, k := 1000003, m := 4000037);
b(x := v, k := 1000033, m := 4000039);
r := a.y + b.y;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                                              "takt_native_literals");
    EXPECT_EQ(body.find("memmove"), std::string::npos) << body;
    EXPECT_NE(body.find(", 1000003"), std::string::npos) << body;
    EXPECT_NE(body.find(", 1000033"), std::string::npos) << body;
    EXPECT_NE(body.find(", 4000037"), std::string::npos) << body;
    // Only the first word of b's inputs lies at the start of a stored block: the second is
    // forwarded from the middle of one, which needs the common base.
    EXPECT_NE(body.find(", 4000039"), std::string::npos) << body;
}

// A store to an array element leaves the variables beside the array alone (each array's element
// accesses have an alias scope the other accesses of the body are apart from), so the counter
// and the other operands of timers_edges' input loop stay in registers and LLVM vectorises it.
TEST(NativeTierShared, LoopStoringIntoAnArrayBesideItsCounterIsVectorised) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    const std::string body = optimisedBodyOfP(R"(
PROGRAM p
VAR inp : ARRAY[0..199] OF BOOL; k : DINT; cnt : DINT; END_VAR
cnt := cnt + 1;
FOR k := 0 TO 199 DO inp[k] := ((cnt + k) MOD 50) < 25; END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                                              "takt_native_vectorised");
    EXPECT_NE(body.find("store <"), std::string::npos) << body;
}

// Direct accesses inside an array's span (a constant index, a field of an element) mixed with
// element loads and stores, in a PROGRAM and in two inlined instances of an FB: the alias
// scopes of the arrays must not separate what overlaps.
constexpr const char* kArraysBesideVariables = R"(
TYPE Pair : STRUCT a : INT; b : REAL; END_STRUCT; END_TYPE
FUNCTION_BLOCK Window
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR buf : ARRAY[0..7] OF DINT; pos : INT; sum : DINT; k : INT; END_VAR
buf[pos] := x;
buf[3] := buf[3] + 1;
pos := (pos + 1) MOD 8;
sum := 0;
FOR k := 0 TO 7 DO sum := sum + buf[k]; END_FOR;
y := sum + buf[3];
END_FUNCTION_BLOCK
PROGRAM p
VAR
  w1, w2 : Window;
  v : ARRAY[0..19] OF DINT; n, k : DINT; s : DINT;
  pr : ARRAY[1..10] OF Pair; t : REAL;
  m : ARRAY[0..3, 0..3] OF INT;
END_VAR
n := n + 1;
FOR k := 0 TO 19 DO v[k] := v[k] + k * n; v[5] := v[5] + 1; END_FOR;
v[7] := v[7] - v[(n MOD 20)];
s := v[5] + v[(n MOD 20)] + v[7];
FOR k := 1 TO 10 DO pr[k].a := DINT_TO_INT(k + n); pr[k].b := pr[k].b + 0.5; t := t + pr[3].b; END_FOR;
pr[4].a := pr[4].a + 1;
t := t + pr[3].b + INT_TO_REAL(pr[4].a);
m[n MOD 4, 2] := m[1, 2] + 1;
w1(x := n);
w2(x := s);
s := s + w1.y + w2.y + m[1, 2] + m[2, 2];
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierShared, ArraysBesideVariablesSameImageAsInterpreterEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kArraysBesideVariables, 40, 1'000'000);
}

// Division and remainder by constants (DIV_/MOD_/ADDMOD_*_IMM), which the tier leaves to LLVM's
// division by the constant and the interpreter computes through the verified reciprocal: the
// same values at the edges (the most negative DINT, -1, 0, the largest UDINT, negative divisors).
constexpr const char* kDivisionByConstants = R"(
PROGRAM p
VAR
  v : ARRAY[0..11] OF DINT := [-2147483648, -2147483647, -65537, -50, -49, -1, 0, 1, 49, 50, 65537, 2147483647];
  r : ARRAY[0..11, 0..7] OF DINT; u : ARRAY[0..11, 0..2] OF UDINT; k, n : DINT; x : DINT; y : UDINT;
END_VAR
n := n + 1;
FOR k := 0 TO 11 DO
  x := v[k] + n - 1;
  r[k, 0] := x / 7; r[k, 1] := x / -7; r[k, 2] := x MOD 50; r[k, 3] := x MOD -50;
  r[k, 4] := (x + n) MOD 256; r[k, 5] := x / 65537; r[k, 6] := x MOD 2147483647; r[k, 7] := x / -2147483647;
  y := DINT_TO_UDINT(x);
  u[k, 0] := y / 3; u[k, 1] := y MOD 65537; u[k, 2] := (y + 4294967295) MOD 1000;
END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

TEST(NativeTierMath, DivisionByConstantsSameImageAsInterpreterEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameImageEveryCycle(kDivisionByConstants, 5, 1'000'000);
}

// Every instruction of the list has an emitter: a program never falls back today.
TEST(NativeTierStatus, EveryOpcodeIsTranslated) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    for (std::uint32_t op = 0; op < bytecode::kOpcodeCount; ++op) {
        EXPECT_TRUE(native::translates(static_cast<bytecode::Opcode>(op))) << bytecode::kOpcodeInfo[op].name;
    }
}

// Every program of the conformance suite and of the valid corpus compiles to native code (the
// conformance scripts then run on it: NativeTierConformance), so none of them silently runs
// on the interpreter there.
TEST(NativeTierStatus, EveryCorpusProgramCompiles) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    namespace fs = std::filesystem;
    std::size_t compiled = 0;
    for (const char* folder : {"tests/st/conformance", "tests/st/valid"}) {
        for (const auto& entry : fs::recursive_directory_iterator(fs::path(TAKT_SOURCE_DIR) / folder)) {
            if (!entry.is_regular_file() || entry.path().extension() != ".st") {
                continue;
            }
            std::ifstream in(entry.path());
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            const takt::test::CompiledText program = takt::test::compileText(text);
            if (!program.program.ok()) {
                continue; // a part of a multi-file case
            }
            TierRun nat = start(program, Execution::Native);
            EXPECT_EQ(nat.runner->executionStatus(), "native") << entry.path();
            ++compiled;
        }
    }
    EXPECT_GT(compiled, 100u);
}

TEST(NativeTierStatus, ParseExecution) {
    Execution e = Execution::Native;
    EXPECT_TRUE(parseExecution("interpreter", e));
    EXPECT_EQ(e, Execution::Interpreter);
    EXPECT_TRUE(parseExecution("native", e));
    EXPECT_EQ(e, Execution::Native);
    EXPECT_FALSE(parseExecution("jit", e));
}

} // namespace
} // namespace takt::engine
