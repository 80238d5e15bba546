// The native tier's code cache (runtime/native/src/object_cache.h): each POU is compiled in a
// module of its own, and an online change generates machine code only for the POUs whose
// translation it changed (a POU, and those that carry a copy of it to inline). The others' objects are linked again,
// also when the change moved them in the code area, and the program runs as on the interpreter, a trap in a moved POU
// named at its own instruction. Every test name holds "NativeTier" (ctest label `native`).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

// Three FBs and the PROGRAM that calls them; `early` is the body of the first, whose code lies
// before the others', `salt` makes the program one no other test compiled (the cache is the
// process's). Middle calls a TON (the standard FBs' bitcode is linked into its module). Late's
// body is too long to be copied into p, so p calls its own code; Late divides by zero in
// cycle 3.
std::string program(const std::string& early, int salt) {
    std::string late;
    for (int i = 0; i < 40; ++i) {
        late += "y := y + x * " + std::to_string(i + 2) + " - (y / 7);\n";
    }
    return R"(
FUNCTION_BLOCK Early
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR t : TON; END_VAR
)" + early +
           R"(
END_FUNCTION_BLOCK
FUNCTION_BLOCK Middle
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
VAR t : TON; END_VAR
t(IN := x > 2, PT := T#5ms);
y := x * 3 + )" +
           std::to_string(salt) +
           R"(;
END_FUNCTION_BLOCK
FUNCTION_BLOCK Late
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT y : DINT; END_VAR
y := 0;
)" + late + R"(y := y + 100 / (3 - x);
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

// The native compile of `compiled` with the standard FBs of a machine of its own, as the engine
// compiles a program (`threads`: native::compile's, 0 for one per CPU).
native::CompileResult compileNative(const takt::test::CompiledText& compiled, unsigned threads = 0) {
    std::vector<std::uint8_t> image(vm::Vm::requiredImageSize(*compiled.program.module));
    const vm::Vm machine(*compiled.program.module, image);
    return native::compile(*compiled.program.module, directFbsOf(machine), {}, nullptr, threads);
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
    const takt::test::CompiledText before =
        takt::test::compileText(program("t(IN := x > 1, PT := T#2ms); y := x + 1;", salt));
    ASSERT_TRUE(before.program.ok()) << before.rendered();
    const native::CompileResult first = compileNative(before);
    ASSERT_NE(first.code, nullptr) << first.error;
    // Without the standard FBs' bitcode (a build without clang 14) the code calls a TON through
    // the address of its machine's layout, which differs between two loads: Middle is compiled
    // again on every load there.
    if (!first.standardFbsLinked) {
        GTEST_SKIP() << "takt built without the standard FBs' bitcode";
    }
    // Early, Middle, Late and p at least (the standard library's ST bodies another test may
    // have compiled).
    EXPECT_GE(first.pousCompiled, 4U);
    const std::uint32_t bodies = first.pousCompiled + first.pousReused;

    // The same program again: nothing to generate.
    const native::CompileResult again = compileNative(before);
    ASSERT_NE(again.code, nullptr) << again.error;
    EXPECT_EQ(again.pousCompiled, 0U);
    EXPECT_EQ(again.pousReused, bodies);

    // Early's body grows and no longer calls its TON: Middle and Late move in the code area, yet
    // keep their code (Middle's too, though the module before it no longer links the standard
    // FBs); p, whose module carries Early's body to inline it, is compiled again.
    const takt::test::CompiledText after =
        takt::test::compileText(program("IF x > 1 THEN y := x * x - 1; ELSE y := x + 2; END_IF;", salt));
    ASSERT_TRUE(after.program.ok()) << after.rendered();
    const bytecode::Module& module = *after.program.module;
    const std::uint32_t late = pouNamed(module, "Late");
    ASSERT_NE(late, bytecode::kNone);
    ASSERT_NE(module.pous[late].code, before.program.module->pous[pouNamed(*before.program.module, "Late")].code);
    const native::CompileResult changed = compileNative(after);
    ASSERT_NE(changed.code, nullptr) << changed.error;
    EXPECT_EQ(changed.pousCompiled, 2U);
    EXPECT_EQ(changed.pousReused, bodies - 2);

    // The changed program on both tiers: the same image every cycle, and Late's division by zero
    // in cycle 3, in Late's own code kept from before the change, at the same instruction.
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

// The code of the program running and of the one before it is kept (an online change and its
// rollback generate no code); a third program pushes the oldest out.
TEST(NativeTierCache, TheCodeOfTheLastTwoProgramsIsKept) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) + 7;
    const auto version = [salt](int v) {
        return takt::test::compileText(R"(
PROGRAM p
VAR n, r : DINT; END_VAR
n := n + )" + std::to_string(salt) + R"(;
r := n * )" + std::to_string(v) + R"(;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    };
    const takt::test::CompiledText v1 = version(1);
    const takt::test::CompiledText v2 = version(2);
    const takt::test::CompiledText v3 = version(3);
    ASSERT_TRUE(v1.program.ok() && v2.program.ok() && v3.program.ok()) << v1.rendered();
    const auto compiled = [](const takt::test::CompiledText& v) {
        const native::CompileResult r = compileNative(v);
        EXPECT_NE(r.code, nullptr) << r.error;
        return r.pousCompiled;
    };
    EXPECT_GE(compiled(v1), 1U);
    EXPECT_EQ(compiled(v2), 1U); // p; the library's bodies are kept
    EXPECT_EQ(compiled(v1), 0U); // a rollback
    EXPECT_EQ(compiled(v1), 0U); // the same program again counts once
    EXPECT_EQ(compiled(v2), 0U);
    EXPECT_EQ(compiled(v3), 1U); // v1's p goes
    EXPECT_EQ(compiled(v2), 0U);
    EXPECT_EQ(compiled(v1), 1U);
}

// The POUs compiled side by side on several threads get the keys and objects one thread gives
// them: a program compiled on three threads is found whole in the cache by a compile on one, and
// the other way round; the compile says how many threads it used (never more than its POUs or 8).
TEST(NativeTierCache, SeveralThreadsCompileWhatOneThreadCompiles) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) + 13;
    const takt::test::CompiledText first =
        takt::test::compileText(program("t(IN := x > 1, PT := T#2ms); y := x + 1;", salt));
    const takt::test::CompiledText second = takt::test::compileText(program("y := x - 1;", salt));
    ASSERT_TRUE(first.program.ok() && second.program.ok()) << first.rendered();

    const native::CompileResult parallel = compileNative(first, 3);
    ASSERT_NE(parallel.code, nullptr) << parallel.error;
    if (!parallel.standardFbsLinked) {
        GTEST_SKIP() << "takt built without the standard FBs' bitcode (TON callers compiled on every load)";
    }
    EXPECT_EQ(parallel.compileThreads, 3U);
    EXPECT_GE(parallel.pousCompiled, 4U); // Early, Middle, Late, p: none compiled before
    const std::uint32_t bodies = parallel.pousCompiled + parallel.pousReused;
    const native::CompileResult serial = compileNative(first, 1);
    ASSERT_NE(serial.code, nullptr) << serial.error;
    EXPECT_EQ(serial.compileThreads, 1U);
    EXPECT_EQ(serial.pousCompiled, 0U);
    EXPECT_EQ(serial.pousReused, bodies);

    // Early changed: compiled on one thread, then found by three.
    const native::CompileResult changedSerial = compileNative(second, 1);
    ASSERT_NE(changedSerial.code, nullptr) << changedSerial.error;
    EXPECT_EQ(changedSerial.pousCompiled, 2U); // Early, and p that inlines it
    const native::CompileResult changedParallel = compileNative(second, 64);
    ASSERT_NE(changedParallel.code, nullptr) << changedParallel.error;
    EXPECT_EQ(changedParallel.compileThreads, std::min(8U, bodies));
    EXPECT_EQ(changedParallel.pousCompiled, 0U);
}

// The mappings of native code in this process (/proc/self/maps): the address ranges of the
// compiles' code files, and whether any such mapping was ever writable.
struct CodeMappings {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
    bool writable = false;
};
CodeMappings codeMappings() {
    CodeMappings found;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("takt-native-code") == std::string::npos) {
            continue;
        }
        std::istringstream fields(line);
        std::string range;
        std::string perms;
        fields >> range >> perms;
        const std::size_t dash = range.find('-');
        found.ranges.emplace_back(std::stoull(range.substr(0, dash), nullptr, 16),
                                  std::stoull(range.substr(dash + 1), nullptr, 16));
        found.writable = found.writable || perms.find('w') != std::string::npos;
    }
    return found;
}

// A compile's code is one mapping, whatever the number of its POUs: the code of every POU body
// lies in it, read+execute and never writable, and it goes with the compiled module.
TEST(NativeTierCode, OneCompileIsOneCodeMapping) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000) + 17;
    const takt::test::CompiledText compiled = takt::test::compileText(program("y := x + 2;", salt));
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered();
    const CodeMappings before = codeMappings();
    native::CompileResult result = compileNative(compiled, 2);
    ASSERT_NE(result.code, nullptr) << result.error;
    const CodeMappings after = codeMappings();
    ASSERT_EQ(after.ranges.size(), before.ranges.size() + 1);
    EXPECT_FALSE(after.writable);
    const auto added = std::find_if(after.ranges.begin(), after.ranges.end(), [&before](const auto& range) {
        return std::find(before.ranges.begin(), before.ranges.end(), range) == before.ranges.end();
    });
    ASSERT_NE(added, after.ranges.end());
    const auto [start, end] = *added;
    const bytecode::Module& module = *compiled.program.module;
    std::uint32_t bodies = 0;
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        if (const native::Entry entry = result.code->entry(p); entry != nullptr) {
            const auto at = reinterpret_cast<std::uintptr_t>(entry);
            EXPECT_TRUE(at >= start && at < end) << module.pous[p].name;
            ++bodies;
        }
    }
    EXPECT_GE(bodies, 4U); // Early, Middle, Late, p
    result.code.reset();
    EXPECT_EQ(codeMappings().ranges.size(), before.ranges.size());
}

} // namespace
} // namespace takt::engine
