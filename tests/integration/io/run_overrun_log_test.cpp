// `takt run`'s log of cycle overruns. The run is stopped with SIGSTOP a few times (as a busy
// machine keeps the scan thread from running): each stop makes a cycle that is released late,
// not one that runs long. The log used to say "cycle N took 24.9us" once per overrun; now it says
// which it was, and after the first of a burst it sums the rest up in one line.
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

TEST(RunOverrunLog, LateReleasesAreNamedAndRepeatsSummedUp) {
    takt::test::TempDir dir;
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"p\"\ncycle_interval_ms = 2\n");
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", "PROGRAM Main\nVAR n : DINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n");
    takt::test::Process run(takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"}),
                            {.log = dir.path() / "run.log"});
    ASSERT_FALSE(run.waitForLine({"driver health:"}).empty()) << run.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(run.signal(SIGSTOP));
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        ASSERT_TRUE(run.signal(SIGCONT));
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    EXPECT_EQ(run.terminate(), 0) << run.log();
    const std::string log = run.log();
    // The first overrun on its own line, saying which kind it was; the others in one summary.
    EXPECT_EQ(count(log, "cycle_overrun: cycle "), 1u) << log;
    EXPECT_EQ(count(log, "(repeats are summed up every 10s)"), 1u) << log;
    EXPECT_EQ(log.find("release(s) skipped"), std::string::npos) << log; // the old "cycle N took 24.9us" line
    // The first may be the busy test machine's own; it says which kind it was either way.
    EXPECT_TRUE(log.find(" late (the scan thread was not scheduled in time), ran ") != std::string::npos ||
                log.find(" (long execution: the program and its I/O took longer than the cycle)") != std::string::npos)
        << log;
    EXPECT_EQ(count(log, "more cycle overrun"), 1u) << log;
    EXPECT_NE(log.find("since the last report ("), std::string::npos) << log;
    EXPECT_NE(log.find(" late releases, up to "), std::string::npos) << log; // the stops
    EXPECT_NE(log.find("ms late"), std::string::npos) << log;
}

} // namespace
} // namespace takt::io
