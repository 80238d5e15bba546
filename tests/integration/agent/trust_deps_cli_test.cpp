// truST's trust-lsp.toml libraries: tests/trust/deps/app depends on libs/filters (its own
// trust-lsp.toml, which depends on libs/maths, which has none). validate, build, run and test
// compile the libraries' sources with the project's; a missing library folder is one coded
// error at its key, not unknown names in every file that uses it; keys takt ignores warn.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/paths.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "support/validate_report.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;
using takt::test::runTakt;
using takt::test::TempDir;
using takt::test::validateReport;

// A copy of tests/trust/deps (builds write program.stbc into the project).
fs::path copyFixture(const TempDir& dir) {
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "tests/trust/deps", dir.path(), fs::copy_options::recursive);
    return dir.path() / "app";
}

// The validate --ci diagnostic with this code, as "line:column message"; empty when absent.
std::string coded(const rapidjson::Document& doc, const char* code) {
    if (!doc.IsObject() || !doc.HasMember("diagnostics")) {
        return {};
    }
    for (const auto& d : doc["diagnostics"].GetArray()) {
        if (d.HasMember("code") && std::string(d["code"].GetString()) == code) {
            return std::to_string(d["line"].GetUint()) + ":" + std::to_string(d["column"].GetUint()) + " " +
                   d["message"].GetString();
        }
    }
    return {};
}

void rewrite(const fs::path& file, const std::string& from, const std::string& to) {
    std::string text = takt::test::readText(file);
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(file, std::ios::trunc) << text;
}

TEST(TrustDeps, NestedLibrariesCompileWithTheProject) {
    TempDir dir;
    const fs::path app = copyFixture(dir);
    const takt::test::RunResult v = runTakt("validate --ci", app);
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    const rapidjson::Document doc = validateReport(v);
    EXPECT_EQ(coded(doc, "W0012"), "5:1 project.lint_level: ignored by takt (not a key takt reads)") << v.out;
    EXPECT_EQ(coded(doc, "W0013"), "") << v.out; // 1.0.0 asked, 1.0.0 declared

    const takt::test::RunResult built = runTakt("build", app);
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    EXPECT_NE((built.out + built.err).find("4 sources"), std::string::npos)
        << built.out << built.err; // Main.st, Tests.st, smoother.st, clamp.st
    const takt::test::RunResult tested = runTakt("test", app);
    EXPECT_EQ(tested.exitCode, 0) << tested.out << tested.err;
    EXPECT_NE(tested.out.find("1 passed, 0 failed"), std::string::npos) << tested.out;

    takt::test::Process run(takt::test::taktArgv({"run", "--project", app.string(), "--for", "1s"}),
                            {.log = dir.path() / "run.log"});
    ASSERT_TRUE(run.started());
    EXPECT_EQ(run.waitOrKill(std::chrono::seconds(30)), 0) << takt::test::readText(dir.path() / "run.log");
}

TEST(TrustDeps, MissingLibraryFolderIsOneErrorAtItsKey) {
    TempDir dir;
    const fs::path app = copyFixture(dir);
    rewrite(dir.path() / "libs/filters/trust-lsp.toml", "\"../maths\"", "\"../mathematics\"");
    const takt::test::RunResult v = runTakt("validate --ci", app);
    EXPECT_EQ(v.exitCode, 11) << v.out << v.err;
    const rapidjson::Document doc = validateReport(v);
    EXPECT_EQ(
        coded(doc, "E0022").substr(0, 80),
        std::string("9:18 dependencies.Maths.path: library folder '../mathematics' does not exist (lo").substr(0, 80))
        << v.out;
    EXPECT_EQ(coded(doc, "E0102"), "") << v.out; // Clamp's users are not reported as unknown names

    const takt::test::RunResult check = runTakt("check", app);
    EXPECT_EQ(check.exitCode, 11);
    EXPECT_NE(check.err.find("libs/filters/trust-lsp.toml:9:18: error[E0022]: dependencies.Maths.path"),
              std::string::npos)
        << check.err;
    const takt::test::RunResult built = runTakt("build", app);
    EXPECT_EQ(built.exitCode, 11) << built.out << built.err;
    EXPECT_FALSE(fs::exists(app / "program.stbc"));
}

TEST(TrustDeps, VersionMismatchWarnsAndGitIsRefused) {
    TempDir dir;
    const fs::path app = copyFixture(dir);
    rewrite(app / "trust-lsp.toml", "version = \"1.0.0\"", "version = \"2.0.0\"");
    takt::test::RunResult v = runTakt("validate --ci", app);
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    EXPECT_EQ(coded(validateReport(v), "W0013").substr(0, 47), "8:49 dependencies.Filters.version: asks for 2.0")
        << v.out;

    rewrite(app / "trust-lsp.toml", "path = \"../libs/filters\"", "git = \"https://example.org/filters.git\"");
    v = runTakt("validate --ci", app);
    EXPECT_EQ(v.exitCode, 11) << v.out << v.err;
    EXPECT_NE(coded(validateReport(v), "E0023").find("dependencies.Filters.git: takt reads path dependencies only"),
              std::string::npos)
        << v.out;
}

// An include path that does not exist is a warning; with none left, src/ is compiled.
TEST(TrustDeps, MissingIncludePathFallsBackToSrc) {
    TempDir dir;
    const fs::path app = copyFixture(dir);
    rewrite(app / "trust-lsp.toml", "include_paths = [\"src\"]", "include_paths = [\"sources\"]");
    const takt::test::RunResult v = runTakt("validate --ci", app);
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    EXPECT_NE(v.out.find("project.include_paths: ignored by takt (no folder 'sources' at"), std::string::npos) << v.out;
    const takt::test::RunResult tested = runTakt("test", app);
    EXPECT_EQ(tested.exitCode, 0) << tested.out << tested.err;
}

// A source error fails validate (exit 11, as takt check) with its file, line and column.
TEST(TrustDeps, ValidateReportsSourceErrors) {
    TempDir dir;
    const fs::path app = copyFixture(dir);
    rewrite(app / "src/Main.st", "level := smoother.Output;", "level := smoother.Outptu;");
    const takt::test::RunResult v = runTakt("validate", app);
    EXPECT_EQ(v.exitCode, 11) << v.out << v.err;
    EXPECT_NE(v.err.find("src/Main.st:7:23: error[E0"), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("takt validate: the sources do not compile"), std::string::npos) << v.err;
}

// DIFU and DIFD (tests/trust/mitsubishi asserts their values) need no profile: the test passes
// under "mitsubishi" and "codesys" alike, and a profile takt does not know is W0012 naming the key.
TEST(TrustDeps, MitsubishiProfileAddsDifuDifd) {
    TempDir dir;
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "tests/trust/mitsubishi", dir.path(), fs::copy_options::recursive);
    takt::test::RunResult t = runTakt("test", dir.path());
    EXPECT_EQ(t.exitCode, 0) << t.out << t.err;
    EXPECT_NE(t.out.find("1 passed, 0 failed"), std::string::npos) << t.out;

    rewrite(dir.path() / "trust-lsp.toml", "\"mitsubishi\"", "\"codesys\"");
    t = runTakt("test", dir.path());
    EXPECT_EQ(t.exitCode, 0) << t.out << t.err;
    EXPECT_NE(t.out.find("1 passed, 0 failed"), std::string::npos) << t.out;

    rewrite(dir.path() / "trust-lsp.toml", "\"codesys\"", "\"siemens\"");
    t = runTakt("check", dir.path());
    EXPECT_NE(t.err.find("trust-lsp.toml:3:18: warning[W0012]: project.vendor_profile: ignored by takt"),
              std::string::npos)
        << t.err;
}

} // namespace
} // namespace takt::agent
