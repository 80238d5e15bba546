// compileProgram: the one compile path every command takes. What it refuses, with which status
// and exit code, and that the Module it hands out is the one program.stbc holds.
#include <algorithm>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/exit_codes.h"

namespace takt::compiler {
namespace {

constexpr const char* kCounter = "PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n";

bool hasCode(const std::vector<Diagnostic>& diags, std::string_view code) {
    return std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& d) { return diagInfo(d.code).code == code; });
}

TEST(CompileProgram, TheModuleAndHashAreThoseOfTheProgramFile) {
    Project project = checkSources({{"main.st", kCounter}});
    const CompiledProgram c = compileProgram(project);
    ASSERT_TRUE(c.ok()) << c.failure;
    EXPECT_EQ(exitCode(c.status), kExitOk);
    ASSERT_NE(c.module, nullptr);
    EXPECT_EQ(bytecode::serialize(*c.module), c.bytes);
    const bytecode::VerifiedProgram file = bytecode::loadVerified(c.bytes);
    ASSERT_TRUE(file.ok()) << file.error;
    EXPECT_EQ(c.hash, file.hashHex());
    // Deterministic: the same sources give the same hash on every path and every run.
    Project again = checkSources({{"main.st", kCounter}});
    EXPECT_EQ(compileProgram(again).hash, c.hash);
}

TEST(CompileProgram, SourceErrorsBuildNothingAndExitWithTheBuildFailureCode) {
    Project project = checkSources({{"main.st", "PROGRAM Main\nx := 1;\nEND_PROGRAM\n"}});
    const CompiledProgram c = compileProgram(project);
    EXPECT_EQ(c.status, CompileStatus::SourceErrors);
    EXPECT_EQ(exitCode(c.status), kExitBuildFailure);
    EXPECT_EQ(c.module, nullptr);
    EXPECT_TRUE(c.bytes.empty());
    EXPECT_TRUE(c.hash.empty());
    EXPECT_EQ(c.diagnostics.size(), project.diagnostics.size());
    EXPECT_FALSE(c.diagnostics.empty());
}

TEST(CompileProgram, WarningsAreKeptAndDoNotStopTheBuild) {
    Project project =
        checkSources({{"main.st", "PROGRAM Main\nVAR n : INT; unused : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"}});
    const CompiledProgram c = compileProgram(project);
    ASSERT_TRUE(c.ok()) << c.failure;
    EXPECT_TRUE(hasCode(c.diagnostics, "W0001"));
}

TEST(CompileProgram, AnInvalidProjectIsRefusedBeforeCompiling) {
    takt::test::TempDir dir;
    dir.write("runtime.toml", "[build]\noverflow = \"sometimes\"\n");
    dir.write("src/main.st", kCounter);
    ProjectInput input;
    input.directory = dir.path();
    Project project = checkProject(input);
    ASSERT_FALSE(project.valid());
    const CompiledProgram c = compileProgram(project);
    EXPECT_EQ(c.status, CompileStatus::InvalidProject);
    EXPECT_EQ(exitCode(c.status), kExitInvalidProject);
    EXPECT_EQ(c.module, nullptr);
}

// CONFIG.md: the exit codes are truST's.
TEST(CompileProgram, ExitCodesAreTheDocumentedOnes) {
    EXPECT_EQ(exitCode(CompileStatus::Ok), 0);
    EXPECT_EQ(exitCode(CompileStatus::InvalidProject), 10);
    EXPECT_EQ(exitCode(CompileStatus::SourceErrors), 11);
    EXPECT_EQ(exitCode(CompileStatus::Internal), 20);
}

} // namespace
} // namespace takt::compiler
