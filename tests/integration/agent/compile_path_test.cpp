// One compile path: `takt build`, the harness, the runtime reading program.stbc and
// `takt validate` report the same program hash for the same sources, and a program.stbc the
// verifier rejects is refused by every command that loads one, with the same exit code.
#include <string>

#include <gtest/gtest.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/agent/harness.h"
#include "takt/agent/project_build.h"
#include "takt/agent/validate.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/compile_program.h"

namespace takt::agent {
namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;

constexpr const char* kMain = "PROGRAM Main\nVAR\n  start AT %IX0.0 : BOOL;\n  motor AT %QX0.0 : BOOL;\nEND_VAR\n"
                              "motor := start;\nEND_PROGRAM\n";
constexpr const char* kRuntime = "[bundle]\nversion = 1\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n";
constexpr const char* kIo = "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 4\n";

TEST(CompilePath, EveryPathReportsTheSameProgramHash) {
    TempDir dir;
    dir.write("runtime.toml", kRuntime);
    dir.write("io.toml", kIo);
    dir.write("src/main.st", kMain);
    compiler::ProjectInput input;
    input.directory = dir.path();
    compiler::Project project = compiler::checkProject(input);
    const BuildOutcome built = buildProject(project);
    ASSERT_EQ(built.exitCode, 0) << built.failure;
    ASSERT_EQ(built.hash.size(), 64u);

    const bytecode::VerifiedProgram file = bytecode::loadVerifiedFile(dir.path() / "program.stbc");
    ASSERT_TRUE(file.ok()) << file.error;
    EXPECT_EQ(file.hashHex(), built.hash);

    // The harness compiles from memory; with the same display path it builds the same file.
    const CompileOutcome harness = defaultHarnessDeps().compile({{"src/main.st", kMain}}, compiler::BuildOptions{});
    ASSERT_EQ(harness.status, CompileOutcome::Status::Ok) << harness.message;
    EXPECT_EQ(harness.hash, built.hash);

    ValidateRequest request;
    request.project = dir.path();
    EXPECT_EQ(validateProject(request).programHash, built.hash);
}

// A program.stbc that decodes but fails verification (an init entry that is no POU).
std::vector<std::uint8_t> unverifiableProgram() {
    compiler::Project project = compiler::checkSources({{"src/main.st", kMain}});
    const compiler::CompiledProgram compiled = compiler::compileProgram(project);
    EXPECT_TRUE(compiled.ok()) << compiled.failure;
    bytecode::Module bad = *compiled.module;
    bad.initCode = static_cast<std::uint32_t>(bad.code.size()) + 64;
    EXPECT_FALSE(bytecode::verify(bad).ok());
    return bytecode::serialize(bad);
}

TEST(CompilePath, AProgramTheVerifierRejectsIsRefusedByEveryCommand) {
    TempDir dir;
    dir.write("runtime.toml", kRuntime);
    dir.write("io.toml", kIo);
    const std::vector<std::uint8_t> bytes = unverifiableProgram();
    dir.write("program.stbc", std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));

    const RunResult run = runTakt("run --for 200ms", dir.path());
    EXPECT_EQ(run.exitCode, 10) << run.out << run.err;
    EXPECT_NE(run.err.find("rejected by the verifier"), std::string::npos) << run.err;

    const RunResult validate = runTakt("validate", dir.path());
    EXPECT_EQ(validate.exitCode, 10) << validate.out << validate.err;
    EXPECT_NE((validate.out + validate.err).find("fails verification"), std::string::npos)
        << validate.out << validate.err;

    const RunResult disasm = runTakt("disasm program.stbc", dir.path());
    EXPECT_EQ(disasm.exitCode, 10) << disasm.out << disasm.err;
    EXPECT_NE(disasm.err.find("verification failed"), std::string::npos) << disasm.err;
}

} // namespace
} // namespace takt::agent
