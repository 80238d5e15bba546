// Every valid ST corpus program that the back end compiles gives a Module the verifier
// accepts, and its program.stbc round-trips byte-identically: the compiler never produces a
// file the runtime would refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/paths.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/disasm.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/project.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpusEntries() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fs::path(TAKT_SOURCE_DIR) / "tests/st/valid")) {
        if (e.is_directory() || e.path().extension() == ".st") {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(StbcCorpus, CompiledProgramsVerifyAndRoundTrip) {
    std::size_t compiled = 0;
    for (const fs::path& entry : corpusEntries()) {
        takt::compiler::ProjectInput input;
        if (fs::is_directory(entry)) {
            input.directory = entry;
        } else {
            input.files = {entry};
        }
        takt::compiler::Project project = takt::compiler::checkProject(input);
        if (!project.ok()) {
            continue; // the corpus runner reports front-end problems
        }
        // The one compile path: program.stbc bytes, decoded and verified (Internal when not).
        const takt::compiler::CompiledProgram program = takt::compiler::compileProgram(project);
        if (program.status == takt::compiler::CompileStatus::SourceErrors) {
            continue; // a construct the back end does not compile yet is its own test's business
        }
        ++compiled;
        ASSERT_TRUE(program.ok()) << entry.filename() << ": " << program.failure;
        EXPECT_EQ(takt::bytecode::serialize(*program.module), program.bytes) << entry.filename();
        EXPECT_FALSE(takt::bytecode::disassemble(*program.module).empty());
    }
    EXPECT_GT(compiled, 0u) << "no corpus program compiled";
}

} // namespace
