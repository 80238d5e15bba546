// The TEST_PROGRAMs of the valid ST corpus run through `takt test` (runTests) and all pass: the
// corpus files that hold assertions pin run-time behaviour (e.g. for_loop_bounds.st, exact FOR
// iteration counts), not only that the file checks clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/paths.h"
#include "takt/agent/test_runner.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Single-file corpus cases that declare at least one TEST_PROGRAM.
std::vector<fs::path> filesWithTests() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fs::path(TAKT_SOURCE_DIR) / "tests/st/valid")) {
        if (e.is_regular_file() && e.path().extension() == ".st" &&
            readFile(e.path()).find("TEST_PROGRAM") != std::string::npos) {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(StCorpusRun, ForLoopBoundsIsPartOfTheRun) {
    const std::vector<fs::path> files = filesWithTests();
    EXPECT_NE(std::find_if(files.begin(), files.end(),
                           [](const fs::path& p) { return p.filename() == "for_loop_bounds.st"; }),
              files.end());
}

void expectEveryTestProgramPasses(engine::Execution execution) {
    for (const fs::path& file : filesWithTests()) {
        const fs::path dir = fs::path(::testing::TempDir()) / ("st_corpus_run_" + file.stem().string());
        fs::remove_all(dir);
        fs::create_directories(dir / "src");
        fs::copy_file(file, dir / "src" / file.filename());
        TestOptions options;
        options.project = dir;
        options.execution = execution;
        const TestReport report = runTests(options);
        ASSERT_FALSE(report.buildFailed) << file.filename() << ": " << report.buildMessage;
        EXPECT_GT(report.passed, 0u) << file.filename();
        EXPECT_EQ(report.failed, 0u) << file.filename() << "\n" << renderTestHuman(report);
        EXPECT_EQ(report.errors, 0u) << file.filename() << "\n" << renderTestHuman(report);
        fs::remove_all(dir);
    }
}

TEST(StCorpusRun, EveryTestProgramPasses) {
    expectEveryTestProgramPasses(engine::Execution::Interpreter);
}

// The same TEST_PROGRAMs on the native tier (ctest -L native).
TEST(StCorpusRun, NativeTierEveryTestProgramPasses) {
    expectEveryTestProgramPasses(engine::Execution::Native);
}

} // namespace
} // namespace takt::agent
