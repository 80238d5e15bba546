// `takt export plcopen DIR FILE.xml` from the command line: the demo exported, imported with
// `takt import plcopen` into a fresh folder and built there gives the program `takt build` gives
// from the ST (program.stbc equal but for its source files and line table); bad arguments and
// projects the XML cannot hold give coded errors and leave no file behind.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/bytecode/container.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& p) {
    return test::shellQuote(p.string());
}

// program.stbc's bytes without the FILES and DEBUG sections; empty when it does not load.
std::vector<std::uint8_t> programWithoutSourcePlaces(const fs::path& stbc) {
    bytecode::LoadResult loaded = bytecode::readProgramFile(stbc);
    EXPECT_TRUE(loaded.ok()) << stbc << ": " << loaded.error;
    if (!loaded.ok()) {
        return {};
    }
    loaded.module.files.clear();
    loaded.module.debug.clear();
    return bytecode::serialize(loaded.module);
}

// Every entry below `dir` (to see that nothing was left behind).
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        out.push_back(fs::relative(e.path(), dir).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(PlcopenExport, TheDemoRoundTripsThroughExportImportAndBuild) {
    test::TempDir tmp;
    const fs::path original = tmp.path() / "demo";
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "examples/demo", original, fs::copy_options::recursive);
    const fs::path xml = tmp.path() / "demo.xml";

    const test::RunResult exported = test::runTakt("export plcopen " + quoted(original) + " " + quoted(xml));
    ASSERT_EQ(exported.exitCode, 0) << exported.out << exported.err;
    EXPECT_NE(exported.out.find("6 POU(s), 4 data type(s), 2 task(s)"), std::string::npos) << exported.out;
    const std::string text = test::readText(xml);
    EXPECT_EQ(text.rfind("<?xml version=\"1.0\" encoding=\"utf-8\"?>", 0), 0u) << text.substr(0, 200);
    EXPECT_NE(text.find("<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\""), std::string::npos);

    const fs::path imported = tmp.path() / "imported";
    const test::RunResult import = test::runTakt("import plcopen " + quoted(xml) + " " + quoted(imported));
    ASSERT_EQ(import.exitCode, 0) << import.out << import.err;
    EXPECT_NE(import.out.find("2 task(s), 16 located variable(s)"), std::string::npos) << import.out;

    const test::RunResult a = test::runTakt("build", original);
    ASSERT_EQ(a.exitCode, 0) << a.out << a.err;
    const test::RunResult b = test::runTakt("build", imported);
    ASSERT_EQ(b.exitCode, 0) << b.out << b.err;
    const std::vector<std::uint8_t> before = programWithoutSourcePlaces(original / "program.stbc");
    ASSERT_FALSE(before.empty());
    EXPECT_TRUE(before == programWithoutSourcePlaces(imported / "program.stbc"));
    // The whole files differ (the line tables name demo.xml's lines): the comparison above is the
    // one that means something.
    EXPECT_NE(test::readText(original / "program.stbc"), test::readText(imported / "program.stbc"));
}

TEST(PlcopenExport, AMissingProjectIsExitCode10AndWritesNothing) {
    test::TempDir tmp;
    const test::RunResult r =
        test::runTakt("export plcopen " + quoted(tmp.path() / "nowhere") + " " + quoted(tmp.path() / "out.xml"));
    EXPECT_EQ(r.exitCode, 10) << r.out << r.err;
    EXPECT_NE(r.err.find("is not a project directory; nothing was written"), std::string::npos) << r.err;
    EXPECT_TRUE(entries(tmp.path()).empty());
}

TEST(PlcopenExport, AnUnwritableFileIsExitCode20AndLeavesNothing) {
    test::TempDir tmp;
    tmp.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    const test::RunResult r = test::runTakt("export plcopen " + quoted(tmp.path() / "p") + " " +
                                            quoted(tmp.path() / "missing-folder" / "out.xml"));
    EXPECT_EQ(r.exitCode, 20) << r.out << r.err;
    EXPECT_NE(r.err.find("missing-folder"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"p", "p/src", "p/src/main.st"}));
}

TEST(PlcopenExport, ANamedSfcTransitionIsE0027AndKeepsTheOlderFile) {
    test::TempDir tmp;
    tmp.write("p/src/seq.st", "PROGRAM Seq\nVAR go : BOOL; END_VAR\nINITIAL_STEP S1: END_STEP\nSTEP S2: END_STEP\n"
                              "TRANSITION Go1 FROM S1 TO S2 := go; END_TRANSITION\n"
                              "TRANSITION FROM S2 TO S1 := NOT go; END_TRANSITION\nEND_PROGRAM\n");
    const fs::path xml = tmp.write("out.xml", "older export");
    const test::RunResult r = test::runTakt("export plcopen " + quoted(tmp.path() / "p") + " " + quoted(xml));
    EXPECT_EQ(r.exitCode, 11) << r.out << r.err;
    EXPECT_NE(r.err.find("src/seq.st:5:1: error[E0027]: 'Seq': a named transition, or one with a body, is not "
                         "exported yet"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(test::readText(xml), "older export");
    EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"out.xml", "p", "p/src", "p/src/seq.st"}));
}

TEST(PlcopenExport, AFileInTheSourcesFolderIsRefused) {
    test::TempDir tmp;
    tmp.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    const test::RunResult r =
        test::runTakt("export plcopen " + quoted(tmp.path() / "p") + " " + quoted(tmp.path() / "p/src/main.xml"));
    EXPECT_EQ(r.exitCode, 10) << r.out << r.err;
    EXPECT_NE(r.err.find("lies in the sources folder"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp.path() / "p/src/main.xml"));
}

} // namespace
} // namespace takt::agent
