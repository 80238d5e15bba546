// The native tier as a plugin, seen from outside a real `takt run` of the demo: a run on the
// interpreter never maps LLVM or the plugin (/proc/PID/maps), a run with --execution native loads
// both and says so, a run whose add-on is missing says that and runs on the interpreter, and a run
// under the kernel's memory-deny-write-execute rule (what takt.service's MemoryDenyWriteExecute=yes
// applies) still runs native. The RSS of each run is recorded (performance.md). ctest -L native.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/paths.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/native/native.h"

namespace takt::test {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The demo without its control endpoint (its /tmp socket is shared by every run of it).
void writeDemo(const TempDir& dir) {
    const fs::path demo = fs::path(TAKT_SOURCE_DIR) / "examples" / "demo";
    for (const auto& entry : fs::directory_iterator(demo / "src")) {
        dir.write("src/" + entry.path().filename().string(), readText(entry.path()));
    }
    std::string runtime = readText(demo / "runtime.toml");
    const std::size_t at = runtime.find("[runtime.control]");
    ASSERT_NE(at, std::string::npos) << "examples/demo/runtime.toml changed";
    runtime.replace(at, runtime.find("\n\n", at) - at, "# no control endpoint");
    dir.write("runtime.toml", runtime);
    dir.write("io.toml", readText(demo / "io.toml"));
}

// `takt run` of the demo, prefixed by `wrapper` (a program that execs the rest), with `env`.
struct DemoRun {
    TempDir dir;
    std::unique_ptr<Process> process;

    DemoRun(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
            const std::vector<std::string>& wrapper = {}) {
        writeDemo(dir);
        std::vector<std::string> argv = wrapper;
        for (const std::string& a :
             taktArgv({"run", "--project", dir.path().string(), "--for", "60s", "--state-dir", dir.path().string()})) {
            argv.push_back(a);
        }
        argv.insert(argv.end(), args.begin(), args.end());
        process = std::make_unique<Process>(argv, ProcessOptions{.env = env, .log = dir.path() / "run.log"});
    }
    // Waits for the scan loop (the "running" line); false when the run ended or never got there.
    bool running() { return !process->waitForLine({"running "}).empty(); }
    [[nodiscard]] std::string maps() const { return readText("/proc/" + std::to_string(process->pid()) + "/maps"); }
    // VmRSS in KiB.
    [[nodiscard]] long rssKiB() const {
        const std::string status = readText("/proc/" + std::to_string(process->pid()) + "/status");
        const std::size_t at = status.find("VmRSS:");
        return at == std::string::npos ? -1 : std::stol(status.substr(at + 6));
    }
};

bool mapsLlvm(const std::string& maps) {
    return maps.find("libLLVM") != std::string::npos;
}
bool mapsPlugin(const std::string& maps) {
    return maps.find("takt-native.so") != std::string::npos;
}

TEST(NativeTierPlugin, InterpreterRunMapsNeitherLlvmNorThePlugin) {
    DemoRun run({});
    ASSERT_TRUE(run.running()) << run.process->log();
    const std::string maps = run.maps();
    EXPECT_FALSE(mapsLlvm(maps)) << maps;
    EXPECT_FALSE(mapsPlugin(maps)) << maps;
    ::testing::Test::RecordProperty("rss_kib_interpreter", std::to_string(run.rssKiB()));
    EXPECT_EQ(run.process->terminate(), 0) << run.process->log();
}

TEST(NativeTierPlugin, NativeRunLoadsThePluginAndSaysSo) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    DemoRun run({"--execution", "native"});
    ASSERT_TRUE(run.running()) << run.process->log();
    EXPECT_NE(run.process->waitForLine({"execution: native (compiled in"}), "") << run.process->log();
    const std::string maps = run.maps();
    EXPECT_TRUE(mapsPlugin(maps));
    EXPECT_TRUE(mapsLlvm(maps));
    ::testing::Test::RecordProperty("rss_kib_native", std::to_string(run.rssKiB()));
    EXPECT_EQ(run.process->terminate(), 0) << run.process->log();
}

// A box without the package takt-native: the run says what is missing and runs on the
// interpreter, as configuration.md says of a program the tier cannot compile.
TEST(NativeTierPlugin, MissingAddOnIsNamedAndTheRunGoesOnOnTheInterpreter) {
    DemoRun run({"--execution", "native"}, {"TAKT_NATIVE_PLUGIN=/nonexistent/takt-native.so"});
    ASSERT_TRUE(run.running()) << run.process->log();
    const std::string line = run.process->waitForLine({"execution: interpreter (native:"});
    EXPECT_NE(line.find("add-on is not installed"), std::string::npos) << run.process->log();
    EXPECT_NE(line.find("takt-native"), std::string::npos) << line;
    EXPECT_FALSE(mapsLlvm(run.maps()));
    EXPECT_EQ(run.process->terminate(), 0) << run.process->log();
}

// takt.service's MemoryDenyWriteExecute=yes, as the kernel's PR_SET_MDWE that systemd sets before
// it starts the service (inherited across exec): the demo still runs native.
TEST(NativeTierWriteExecute, TaktRunUnderMdweRunsNative) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    const std::vector<std::string> mdwe = {
        "/usr/bin/env", "python3", "-c",
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "if libc.prctl(65, 1, 0, 0, 0) != 0: sys.exit('PR_SET_MDWE: ' + os.strerror(ctypes.get_errno()))\n"
        "if libc.prctl(66, 0, 0, 0, 0) != 1: sys.exit('PR_GET_MDWE: the rule is not set')\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"};
    DemoRun run({"--execution", "native"}, {}, mdwe);
    ASSERT_TRUE(run.running()) << run.process->log();
    EXPECT_NE(run.process->waitForLine({"execution: native (compiled in"}), "") << run.process->log();
    EXPECT_EQ(run.process->terminate(), 0) << run.process->log();
}

} // namespace
} // namespace takt::test
