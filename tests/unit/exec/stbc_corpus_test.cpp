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
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
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
        takt::bytecode::Module module;
        takt::compiler::DiagnosticSink sink;
        if (!takt::compiler::generate(*project.model, project.units, *project.sources, {}, module, sink)) {
            continue; // a construct the back end does not compile yet is its own test's business
        }
        ++compiled;
        takt::bytecode::VerifyResult verified = takt::bytecode::verify(module);
        EXPECT_TRUE(verified.ok()) << entry.filename() << ": " << verified.message;
        std::vector<std::uint8_t> bytes = takt::bytecode::serialize(module);
        takt::bytecode::LoadResult loaded = takt::bytecode::deserialize(bytes);
        ASSERT_TRUE(loaded.ok()) << entry.filename() << ": " << loaded.error;
        EXPECT_EQ(takt::bytecode::serialize(loaded.module), bytes) << entry.filename();
        EXPECT_FALSE(takt::bytecode::disassemble(loaded.module).empty());
    }
    EXPECT_GT(compiled, 0u) << "no corpus program compiled";
}

} // namespace
