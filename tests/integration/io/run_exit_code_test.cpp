// `takt run`'s exit code tells a supervisor how the run ended (README "Exit codes"): 16 when the
// program was halted by a run-time fault, 17 when the final save of the RETAIN variables failed.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/io_test_support.h"
#include "support/takt_cli.h"

namespace takt::io::test {
namespace {

namespace fs = std::filesystem;

void writeProject(const TempDir& dir, const std::string& runtimeExtra, const std::string& program) {
    fs::create_directories(dir.path() / "src");
    dir.write("runtime.toml",
              "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 5\n\n" + runtimeExtra);
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", program);
}

// Divides by zero in cycle 20; safe_halt keeps it halted until --for ends the run.
TEST(RunExitCode, AFaultThatHaltedTheProgramExits16) {
    const TempDir dir;
    writeProject(dir, "",
                 "PROGRAM Main\nVAR\n    n : INT;\n    r : INT;\nEND_VAR\nn := n + 1;\n"
                 "IF n >= 20 THEN\n    r := 100 / (n - n);\nEND_IF;\nEND_PROGRAM\n");
    const takt::test::RunResult r =
        takt::test::runTaktMerged("run --project " + takt::test::shellQuote(dir.path().string()) + " --for 1s");
    EXPECT_EQ(r.exitCode, 16) << r.out;
    EXPECT_NE(r.out.find("exit code 16: the program was halted by a runtime fault in cycle 20"), std::string::npos)
        << r.out;
}

TEST(RunExitCode, ACleanRunExits0) {
    const TempDir dir;
    writeProject(dir, "", "PROGRAM Main\nVAR\n    n : INT;\nEND_VAR\nn := n + 1;\nEND_PROGRAM\n");
    const takt::test::RunResult r =
        takt::test::runTaktMerged("run --project " + takt::test::shellQuote(dir.path().string()) + " --for 200ms");
    EXPECT_EQ(r.exitCode, 0) << r.out;
}

// The retain slots become unwritable while takt runs (each slot path turns into a directory, as
// root is not stopped by file modes): the save SIGTERM makes fails, is logged, and exits 17.
// SIGTERM waits for a periodic save to fail first: that proves a cycle changed the RETAIN values
// after the last good save, and a stop with nothing changed rightly skips its save (this test
// once sent SIGTERM before the next cycle and saw exit 0).
TEST(RunExitCode, AFinalRetainSaveThatFailsIsLoggedAndExits17) {
    const TempDir dir;
    writeProject(dir, "[runtime.retain]\nmode = \"file\"\npath = \".takt/retain\"\nsave_interval_ms = 50\n",
                 "PROGRAM Main\nVAR RETAIN\n    cycles : DINT;\nEND_VAR\ncycles := cycles + 1;\nEND_PROGRAM\n");
    Process takt(takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"}),
                 {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    const fs::path a = dir.path() / ".takt" / "retain.a";
    const fs::path b = dir.path() / ".takt" / "retain.b";
    ASSERT_TRUE(takt.waitFor([&] { return fs::exists(a) || fs::exists(b); })) << takt.log();
    for (const fs::path& slot : {a, b}) {
        fs::remove(slot);
        fs::create_directories(slot);
    }
    ASSERT_TRUE(takt.waitFor([&] { return !takt.lineWith({"runtime.retain: save failed"}).empty(); })) << takt.log();
    EXPECT_EQ(takt.terminate(), 17) << takt.log();
    EXPECT_FALSE(takt.lineWith({"runtime.retain: the final save failed"}).empty()) << takt.log();
}

} // namespace
} // namespace takt::io::test
