// The native execution tier against the interpreter: the same program on both tiers leaves the
// same image after every scan, faults with the same trap at the same instruction (so the same
// POU, line and column), and is stopped by the watchdog budget and the abort flag. Every test
// name holds "NativeTier" (ctest label `native`: ctest -L native).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../../bench/native/st_program.h"
#include "support/compile_text.h"
#include "support/paths.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes imageOf(const LoadedProgram& p) {
    return Bytes(p.image(), p.image() + p.imageSize());
}

// ---- the bench programs: the whole image after every scan ---------------------------------

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
        ASSERT_TRUE(interp.scan()) << interp.faultMessage();
        ASSERT_TRUE(compiled.scan()) << compiled.faultMessage();
        ASSERT_EQ(imageOf(interp.program()), imageOf(compiled.program())) << GetParam() << " after scan " << n + 1;
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

// Which bench programs the tier compiles today, and the reason it gives for the others: a
// change of either is a change users see in runtime.status.
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
    EXPECT_EQ(status("int_arith"), "native");
    EXPECT_EQ(status("real_math"), "native");
    EXPECT_EQ(status("array_struct"), "native");
    EXPECT_EQ(status("fb_calls").rfind("interpreter (native: unsupported ", 0), 0u) << status("fb_calls");
    EXPECT_NE(status("timers_edges").find("CALL_FB at timers_edges:"), std::string::npos) << status("timers_edges");
}

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
void expectSameFault(const std::string& text, int cycles, bool overflowTrap = false, std::uint64_t budget = 0) {
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
    EXPECT_EQ(fn.message, fi.message);
    EXPECT_EQ(fn.pou, fi.pou);
    EXPECT_EQ(fn.codeOffset, fi.codeOffset);
    const FaultReport ri = interp.program->describe(fi);
    const FaultReport rn = nat.program->describe(fn);
    EXPECT_EQ(rn.pou, ri.pou);
    EXPECT_EQ(rn.line, ri.line);
    EXPECT_EQ(rn.column, ri.column);
    EXPECT_NE(ri.line, 0u);
    EXPECT_EQ(imageOf(*nat.program), imageOf(*interp.program));
}

TEST(NativeTierTraps, DivisionByZero) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR a : DINT := 10; b : DINT := 3; q : DINT; n : DINT; END_VAR
n := n + 1;
b := b - 1;
q := q + a / b;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    3);
}

TEST(NativeTierTraps, ModByZeroLint) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR a : LINT := 10; b : LINT := 2; q : LINT; END_VAR
b := b - 1;
q := q + a MOD b;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    2);
}

TEST(NativeTierTraps, ArrayBounds) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR arr : ARRAY[1..4] OF DINT; i : DINT; s : DINT; END_VAR
i := i + 1;
arr[i] := i;
s := s + arr[i];
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    5);
}

TEST(NativeTierTraps, ForStepZero) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR k : DINT; st : DINT := 2; s : DINT; END_VAR
st := st - 1;
FOR k := 1 TO 10 BY st DO
  s := s + k;
END_FOR;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    2);
}

TEST(NativeTierTraps, NullReference) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR r : REF_TO DINT; x : DINT; y : DINT; END_VAR
x := x + 1;
y := y + r^;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    1);
}

TEST(NativeTierTraps, OverflowInTrapMode) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(R"(
PROGRAM p
VAR x : DINT := 2147483640; n : INT := 32760; END_VAR
n := n + 1;
x := x + 1;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)",
                    8, true);
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
    EXPECT_EQ(imageOf(*nat.program), imageOf(*interp.program));
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

TEST(NativeTierWatchdog, WhileTrueStopsAtTheSameTickAsTheInterpreter) {
    if (!native::available()) {
        GTEST_SKIP();
    }
    expectSameFault(kEndless, 1, false, 100'000);
}

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

// ---- what is not translated runs on the interpreter, and says where ----------------------

TEST(NativeTierStatus, UnsupportedInstructionFallsBackNamingIt) {
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
    TierRun nat = start(compiled, Execution::Native);
    EXPECT_EQ(nat.runner->executionStatus(), "interpreter (native: unsupported CALL_FB at p:5)");
    TierRun interp = start(compiled, Execution::Interpreter);
    const bytecode::ProgramInstance& inst = compiled.program.module->programs.front();
    Fault f;
    for (int c = 0; c < 20; ++c) {
        ASSERT_TRUE(interp.runner->runProgram(*interp.program, inst, c * 1'000'000, f));
        ASSERT_TRUE(nat.runner->runProgram(*nat.program, inst, c * 1'000'000, f));
    }
    EXPECT_EQ(imageOf(*nat.program), imageOf(*interp.program));
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
