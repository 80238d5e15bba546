// The native tier's code cache (runtime/native/src/object_cache.h): each POU is compiled in a
// module of its own, and an online change generates machine code only for the POUs whose
// translation it changed (a POU, and those that carry a copy of it to inline). The others' objects are linked again,
// also when the change moved them in the code area, and the program runs as on the interpreter, a trap in a moved POU
// named at its own instruction. Every test name holds "NativeTier" (ctest label `native`).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"

namespace takt::engine {
namespace {

// Three FBs and the PROGRAM that calls them; `early` is the body of the first, whose code lies
// before the others', `salt` makes the program one no other test compiled (the cache is the
// process's). Late divides by zero in cycle 3.
std::string program(const std::string& early, int salt) {
    return R"(
FUNCTION_BLOCK Early
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
)" + early +
           R"(
END_FUNCTION_BLOCK
FUNCTION_BLOCK Middle
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := x * 3 + )" +
           std::to_string(salt) +
           R"(;
END_FUNCTION_BLOCK
FUNCTION_BLOCK Late
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := 100 / (3 - x);
END_FUNCTION_BLOCK
PROGRAM p
VAR e : Early; m : Middle; l : Late; n, sum : DINT; END_VAR
n := n + 1;
e(x := n); m(x := e.y); l(x := n);
sum := sum + e.y + m.y + l.y;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";
}

std::uint32_t pouNamed(const bytecode::Module& module, const std::string& name) {
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        if (module.pous[p].name == name) {
            return p;
        }
    }
    return bytecode::kNone;
}

TEST(NativeTierCache, AChangeOfOnePouCompilesThatPouAndItsInliningCallers) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
    const takt::test::CompiledText before = takt::test::compileText(program("y := x + 1;", salt));
    ASSERT_TRUE(before.program.ok()) << before.rendered();
    const native::CompileResult first = native::compile(*before.program.module);
    ASSERT_NE(first.code, nullptr) << first.error;
    // Early, Middle, Late and p at least (the standard library's ST bodies another test may
    // have compiled).
    EXPECT_GE(first.pousCompiled, 4U);
    const std::uint32_t bodies = first.pousCompiled + first.pousReused;

    // The same program again: nothing to generate.
    const native::CompileResult again = native::compile(*before.program.module);
    ASSERT_NE(again.code, nullptr) << again.error;
    EXPECT_EQ(again.pousCompiled, 0U);
    EXPECT_EQ(again.pousReused, bodies);

    // Early's body grows: Middle and Late move in the code area, yet keep their code; p, whose
    // module carries Early's body to inline it, is compiled again.
    const takt::test::CompiledText after =
        takt::test::compileText(program("IF x > 1 THEN y := x * x - 1; ELSE y := x + 2; END_IF;", salt));
    ASSERT_TRUE(after.program.ok()) << after.rendered();
    const bytecode::Module& module = *after.program.module;
    const std::uint32_t late = pouNamed(module, "Late");
    ASSERT_NE(late, bytecode::kNone);
    ASSERT_NE(module.pous[late].code, before.program.module->pous[pouNamed(*before.program.module, "Late")].code);
    const native::CompileResult changed = native::compile(module);
    ASSERT_NE(changed.code, nullptr) << changed.error;
    EXPECT_EQ(changed.pousCompiled, 2U);
    EXPECT_EQ(changed.pousReused, bodies - 2);

    // The changed program on both tiers: the same image every cycle, and Late's division by zero
    // in cycle 3 at the same instruction.
    LoadedProgram interp(after.program.module, "");
    LoadedProgram nat(after.program.module, "");
    VmRunner interpRunner(0, Execution::Interpreter);
    VmRunner natRunner(0, Execution::Native);
    interpRunner.attach(interp);
    natRunner.attach(nat);
    ASSERT_EQ(natRunner.executionStatus(), "native");
    const bytecode::ProgramInstance& inst = module.programs.front();
    Fault fi;
    Fault fn;
    for (int c = 0; c < 2; ++c) {
        ASSERT_TRUE(interpRunner.runProgram(interp, inst, c, fi)) << fi.message;
        ASSERT_TRUE(natRunner.runProgram(nat, inst, c, fn)) << fn.message;
        ASSERT_EQ(takt::test::stateOf(nat), takt::test::stateOf(interp)) << "cycle " << c;
    }
    ASSERT_FALSE(interpRunner.runProgram(interp, inst, 2, fi));
    ASSERT_FALSE(natRunner.runProgram(nat, inst, 2, fn));
    EXPECT_EQ(fn.message, fi.message);
    EXPECT_EQ(fn.pou, late);
    EXPECT_EQ(fn.pou, fi.pou);
    EXPECT_EQ(fn.codeOffset, fi.codeOffset);
    EXPECT_GE(fn.codeOffset, module.pous[late].code);
    EXPECT_LT(fn.codeOffset, module.pous[late].codeEnd);
}

// A callee's frame size and the layouts a caller uses are part of the caller's translation: a
// change of them compiles the caller again, never links it to code of the old layout.
TEST(NativeTierCache, ACalleesNewInterfaceCompilesItsCallersAgain) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) + 1;
    const auto text = [salt](const std::string& locals) {
        return R"(
FUNCTION Twice : DINT
VAR_INPUT x : DINT; END_VAR
VAR )" + locals +
               R"( END_VAR
Twice := x * 2;
END_FUNCTION
PROGRAM p
VAR n, r : DINT; END_VAR
n := n + )" + std::to_string(salt) +
               R"(;
r := Twice(n);
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";
    };
    const takt::test::CompiledText small = takt::test::compileText(text("a : DINT;"));
    const takt::test::CompiledText large = takt::test::compileText(text("a : DINT; big : ARRAY[0..99] OF LREAL;"));
    ASSERT_TRUE(small.program.ok()) << small.rendered();
    ASSERT_TRUE(large.program.ok()) << large.rendered();
    const native::CompileResult first = native::compile(*small.program.module);
    ASSERT_NE(first.code, nullptr) << first.error;
    const native::CompileResult second = native::compile(*large.program.module);
    ASSERT_NE(second.code, nullptr) << second.error;
    EXPECT_EQ(second.pousCompiled, 2U); // Twice and p, whose call reserves Twice's frame
    EXPECT_EQ(second.pousReused + second.pousCompiled, first.pousReused + first.pousCompiled);
}

} // namespace
} // namespace takt::engine
