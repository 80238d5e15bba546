// `cmake --install` as a user runs it: the installed takt finds the boards installed beside it
// (<prefix>/share/takt/boards), not a directory of the machine that built it, and runs the
// installed example project from any working directory.
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace takt::test {
namespace {

namespace fs = std::filesystem;

// The binary's build tree installed once (component takt) under a scratch prefix of its own.
class Install : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        stage_ = std::make_unique<TempDir>();
        const fs::path build = fs::path(TAKT_BINARY).parent_path();
        const RunResult r = runShell("cmake --install " + shellQuote(build.string()) + " --component takt --prefix " +
                                         shellQuote((stage_->path() / "opt/takt").string()),
                                     {.capture = Capture::Merged});
        log_ = r.out;
    }
    static void TearDownTestSuite() { stage_.reset(); }
    static const TempDir& stage() { return *stage_; }
    static const std::string& log() { return log_; }
    // The installed takt (empty when the install failed: the tests report log()).
    static fs::path installedTakt() {
        const fs::path takt = stage_->path() / "opt/takt/bin/takt";
        return fs::exists(takt) ? takt : fs::path{};
    }

private:
    static inline std::unique_ptr<TempDir> stage_;
    static inline std::string log_;
};

TEST_F(Install, InstalledTaktListsTheBoardsInstalledBesideIt) {
    const fs::path takt = installedTakt();
    ASSERT_FALSE(takt.empty()) << log();
    const fs::path boards = stage().path() / "opt/takt/share/takt/boards";
    ASSERT_TRUE(fs::exists(boards / "raspberry-pi-4.toml")) << log();
    // A board only the installed directory has: found there, so not in the source tree.
    std::string board = readText(boards / "host-sim.toml");
    const std::string name = "name = \"host-sim\"";
    ASSERT_NE(board.find(name), std::string::npos);
    board.replace(board.find(name), name.size(), "name = \"installed-only\"");
    stage().write("opt/takt/share/takt/boards/installed-only.toml", board);

    const RunResult r = runShell("env -u TAKT_BOARDS_DIR " + shellQuote(takt.string()) + " boards",
                                 {.cwd = "/", .capture = Capture::Separate});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("installed-only"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("raspberry-pi-4"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("invalid"), std::string::npos) << r.out;
}

TEST_F(Install, InstalledTaktHasNoPathOfTheBuildMachine) {
    const fs::path takt = installedTakt();
    ASSERT_FALSE(takt.empty()) << log();
    const std::string boards = std::string(TAKT_SOURCE_DIR) + "/boards";
    const RunResult r =
        runShell("grep -c -F " + shellQuote(boards) + " " + shellQuote(takt.string()), {.capture = Capture::Merged});
    EXPECT_EQ(r.exitCode, 1) << boards << " is in the installed binary: " << r.out;
}

TEST_F(Install, InstalledTaktValidatesTheInstalledDemoWithABoard) {
    const fs::path takt = installedTakt();
    ASSERT_FALSE(takt.empty()) << log();
    const fs::path demo = stage().path() / "opt/takt/share/takt/examples/demo";
    ASSERT_TRUE(fs::exists(demo / "runtime.toml")) << log();
    fs::remove(demo / "io.toml"); // so the board's [io] is the one checked
    const RunResult r = runShell("env -u TAKT_BOARDS_DIR " + shellQuote(takt.string()) +
                                     " validate --board raspberry-pi-4 --project " + shellQuote(demo.string()),
                                 {.cwd = "/", .capture = Capture::Merged});
    EXPECT_EQ(r.exitCode, 0) << r.out;
}

} // namespace
} // namespace takt::test
