// `takt fmt` end to end: runs the built binary on temporary files and checks exit codes,
// in-place rewriting and that files with errors are left untouched.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kUnformatted = "program P\nvar x:int; end_var\nx:=x+1;\nend_program\n";
constexpr const char* kFormatted = "PROGRAM P\n    VAR\n        x : INT;\n    END_VAR\n    x := x + 1;\nEND_PROGRAM\n";
constexpr const char* kBroken = "PROGRAM P\nx := 'never closed;\nEND_PROGRAM\n";

using CliRun = takt::test::RunResult; // stdout and stderr together in `out`

class FmtCli : public ::testing::Test {
protected:
    fs::path write(const std::string& name, const std::string& text) { return dir_.write(name, text); }
    static std::string read(const fs::path& p) { return takt::test::readText(p); }
    static CliRun takt(const std::string& args) { return takt::test::runTaktMerged("fmt " + args); }
    static std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

    takt::test::TempDir dir_;
};

TEST_F(FmtCli, CheckExitsZeroWhenEveryFileIsCanonical) {
    fs::path a = write("a.st", kFormatted);
    CliRun r = takt("--check " + q(a));
    EXPECT_EQ(r.exitCode, 0) << r.out;
    EXPECT_EQ(r.out.find("a.st"), std::string::npos) << r.out;
}

TEST_F(FmtCli, CheckListsFilesThatWouldChangeExitsOneAndWritesNothing) {
    fs::path a = write("a.st", kFormatted);
    fs::path b = write("b.st", kUnformatted);
    CliRun r = takt("--check " + q(a) + " " + q(b));
    EXPECT_EQ(r.exitCode, 1) << r.out;
    EXPECT_NE(r.out.find("b.st"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("a.st"), std::string::npos) << r.out;
    EXPECT_EQ(read(b), kUnformatted);
}

TEST_F(FmtCli, RewritesFilesInPlaceAndNamesThem) {
    fs::path a = write("a.st", kUnformatted);
    fs::path b = write("b.st", kFormatted);
    fs::permissions(a, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    CliRun r = takt(q(a) + " " + q(b));
    EXPECT_EQ(r.exitCode, 0) << r.out;
    EXPECT_EQ(read(a), kFormatted);
    EXPECT_EQ(read(b), kFormatted);
    EXPECT_NE(r.out.find("a.st"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("b.st"), std::string::npos) << r.out;
    // Atomic replacement keeps the mode and leaves no temporary file behind.
    EXPECT_EQ(fs::status(a).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    std::size_t entries = std::distance(fs::directory_iterator(dir_.path()), fs::directory_iterator());
    EXPECT_EQ(entries, 2u);
    EXPECT_EQ(takt("--check " + q(a)).exitCode, 0);
}

TEST_F(FmtCli, SymbolicLinkKeepsPointingAtTheRewrittenFile) {
    fs::path target = write("target.st", kUnformatted);
    fs::path link = dir_.path() / "link.st";
    fs::create_symlink(target, link);
    CliRun r = takt(q(link));
    EXPECT_EQ(r.exitCode, 0) << r.out;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read(target), kFormatted);
}

TEST_F(FmtCli, FileWithErrorsIsReportedAndLeftUnchanged) {
    fs::path bad = write("bad.st", kBroken);
    fs::path good = write("good.st", kUnformatted);
    CliRun r = takt(q(bad) + " " + q(good));
    EXPECT_EQ(r.exitCode, 11) << r.out;
    EXPECT_NE(r.out.find("bad.st:2:6: error[E0003]"), std::string::npos) << r.out;
    EXPECT_EQ(read(bad), kBroken);
    EXPECT_EQ(read(good), kFormatted); // the other files are still formatted

    CliRun check = takt("--check " + q(bad));
    EXPECT_EQ(check.exitCode, 11) << check.out;
    EXPECT_EQ(read(bad), kBroken);
}

TEST_F(FmtCli, MissingFileIsAnInvalidProject) {
    CliRun r = takt(q(dir_.path() / "nope.st"));
    EXPECT_EQ(r.exitCode, 10) << r.out;
    EXPECT_NE(r.out.find("nope.st"), std::string::npos) << r.out;
}

TEST_F(FmtCli, DirectoryArgumentIsAnInvalidProject) {
    fs::create_directories(dir_.path() / "src");
    CliRun r = takt(q(dir_.path() / "src"));
    EXPECT_EQ(r.exitCode, 10) << r.out;
    EXPECT_NE(r.out.find("src"), std::string::npos) << r.out;
}

TEST_F(FmtCli, NoFileArgumentIsAUsageError) {
    CliRun r = takt("");
    EXPECT_NE(r.exitCode, 0) << r.out;
}

} // namespace
