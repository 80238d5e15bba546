// docs/takt.service is a unit systemd accepts: `systemd-analyze verify` on a copy whose
// ExecStart points at the takt binary just built (verify checks that the command exists).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

TEST(SystemdUnit, ExampleUnitPassesSystemdAnalyzeVerify) {
    if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "systemd-analyze is not installed";
    }
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/takt.service");
    ASSERT_TRUE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    std::string unit = ss.str();
    EXPECT_NE(unit.find("Type=notify"), std::string::npos);
    EXPECT_NE(unit.find("WatchdogSec="), std::string::npos);
    const std::string exec = "/usr/local/bin/takt";
    const std::size_t at = unit.find(exec);
    ASSERT_NE(at, std::string::npos);
    unit.replace(at, exec.size(), TAKT_BINARY);
    takt::test::TempDir dir;
    const auto path = dir.write("takt.service", unit);
    const takt::test::RunResult verify =
        takt::test::runShell("systemd-analyze verify " + path.string(), {.capture = takt::test::Capture::Merged});
    EXPECT_EQ(verify.exitCode, 0) << verify.out;
    // A broken unit is reported, so the check above can fail.
    const auto bad = dir.write("bad.service", "[Service]\nType=notify\nExecStart=relative/path\n");
    EXPECT_NE(std::system(("systemd-analyze verify " + bad.string() + " >/dev/null 2>&1").c_str()), 0);
}

// The unit fixes the descriptor limit (docs/control.md: the control endpoint's connections are
// bounded, and the budget must not depend on the host's default): LimitNOFILE=N, N at least 256.
TEST(SystemdUnit, ExampleUnitSetsADescriptorLimit) {
    const std::string unit = takt::test::readText(std::string(TAKT_SOURCE_DIR) + "/docs/takt.service");
    const std::size_t at = unit.find("\nLimitNOFILE=");
    ASSERT_NE(at, std::string::npos) << "docs/takt.service has no LimitNOFILE";
    const long n = std::strtol(unit.c_str() + at + 13, nullptr, 10);
    EXPECT_GE(n, 256);
}

} // namespace
} // namespace takt::io
