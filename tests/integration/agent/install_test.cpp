// `cmake --install` as a user runs it: the installed takt finds the boards installed beside it
// (<prefix>/share/takt/boards), not a directory of the machine that built it, runs the installed
// example project from any working directory, and starts the OPC UA server installed beside it.
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/net.h"
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

// The OPC UA server and its npm packages are installed in share/takt/opcua, and the installed
// takt starts that copy, not the source tree's, from any working directory.
TEST_F(Install, InstalledTaktStartsTheOpcuaServerInstalledBesideIt) {
    const fs::path takt = installedTakt();
    ASSERT_FALSE(takt.empty()) << log();
    if (runShell("command -v node", {.capture = Capture::Merged}).exitCode != 0) {
        GTEST_SKIP() << "no node on PATH: the OPC UA server runs on Node.js";
    }
    const fs::path installed = stage().path() / "opt/takt/share/takt/opcua";
    ASSERT_TRUE(fs::exists(installed / "server.js")) << log();
    ASSERT_TRUE(fs::exists(installed / "package-lock.json")) << log();
    if (!fs::exists(fs::path(TAKT_SOURCE_DIR) / "opcua/node_modules/node-opcua")) {
        GTEST_SKIP() << "no npm packages in opcua/ to install (scripts/npm-ci.sh opcua)";
    }
    ASSERT_TRUE(fs::exists(installed / "node_modules/node-opcua/package.json")) << log();

    // A copy of the demo (another test changes the installed one), with its socket and the OPC UA
    // server on this test's own loopback port.
    const fs::path demo = stage().path() / "opcua-demo";
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "examples/demo", demo,
             fs::copy_options::recursive | fs::copy_options::skip_symlinks);
    fs::remove_all(demo / ".takt");
    std::string toml = readText(demo / "runtime.toml");
    const std::string endpoint = "unix:///tmp/takt-demo.sock";
    ASSERT_NE(toml.find(endpoint), std::string::npos) << toml;
    toml.replace(toml.find(endpoint), endpoint.size(), "unix://" + (stage().path() / "ctl.sock").string());
    const std::uint16_t port = freeTcpPort();
    ASSERT_NE(port, 0);
    toml += "\n[runtime.opcua]\nenabled = true\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n";
    stage().write("opcua-demo/runtime.toml", toml);

    Process run({takt.string(), "run", "--project", demo.string(), "--state-dir", (stage().path() / "state").string()},
                {.cwd = "/", .env = {"TAKT_OPCUA_DIR="}, .log = stage().path() / "run.log"});
    ASSERT_TRUE(run.started());
    const std::string line = run.waitForLine({"opcua: "});
    EXPECT_NE(line.find((installed / "server.js").string()), std::string::npos) << run.log();
    // node-opcua listening is the installed packages loading and running.
    EXPECT_TRUE(run.waitFor([&] { return tcpPortOpen(port); }, std::chrono::seconds(60))) << run.log();
    EXPECT_EQ(run.terminate(), 0) << run.log();
}

} // namespace
} // namespace takt::test
