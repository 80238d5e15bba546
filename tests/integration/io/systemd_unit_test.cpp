// docs/takt.service and docs/takt@.service, the units the package installs, are units systemd
// accepts: `systemd-analyze verify` on a copy whose ExecStart points at the takt binary just
// built (verify checks that the command exists), run as the user takt with only the capabilities
// SCHED_FIFO and mlockall need, and scored by `systemd-analyze security`.
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

bool haveSystemdAnalyze() {
    return std::system("command -v systemd-analyze >/dev/null 2>&1") == 0;
}

std::string readUnit(const std::string& name) {
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The unit with its ExecStart on the binary under test, written into `dir` as `as`.
std::filesystem::path unitCopy(const takt::test::TempDir& dir, const std::string& name, const std::string& as) {
    std::string unit = readUnit(name);
    const std::string exec = "ExecStart=/usr/bin/takt ";
    const std::size_t at = unit.find(exec);
    if (at == std::string::npos) {
        return {};
    }
    unit.replace(at, exec.size(), std::string("ExecStart=") + TAKT_BINARY + " ");
    return dir.write(as, unit);
}

class Unit : public ::testing::TestWithParam<const char*> {};

TEST_P(Unit, PassesSystemdAnalyzeVerify) {
    if (!haveSystemdAnalyze()) {
        GTEST_SKIP() << "systemd-analyze is not installed";
    }
    takt::test::TempDir dir;
    const std::string name = GetParam();
    // A template is verified as one of its instances.
    const std::string as = name == "takt@.service" ? "takt@line2.service" : name;
    const auto path = unitCopy(dir, name, as);
    ASSERT_FALSE(path.empty()) << name << " has no ExecStart=/usr/bin/takt";
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

TEST_P(Unit, RunsAsTaktWithOnlyTheRealtimeCapabilities) {
    const std::string unit = readUnit(GetParam());
    for (const char* line :
         {"Type=notify", "WatchdogSec=", "User=takt", "AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK\n",
          "CapabilityBoundingSet=CAP_SYS_NICE CAP_IPC_LOCK\n", "LimitRTPRIO=", "LimitMEMLOCK=infinity",
          "LimitNOFILE=", "ProtectSystem=strict", "ReadWritePaths=/var/lib/takt", "PrivateTmp=yes",
          "NoNewPrivileges=yes", "--state-dir /var/lib/takt"}) {
        EXPECT_NE(unit.find(line), std::string::npos) << GetParam() << " lacks " << line;
    }
    // SCHED_FIFO is what the capabilities are for.
    EXPECT_EQ(unit.find("RestrictRealtime=yes"), std::string::npos);
}

TEST_P(Unit, SystemdAnalyzeSecurityRatesItOk) {
    if (!haveSystemdAnalyze() ||
        std::system("systemd-analyze security --help 2>/dev/null | grep -q -- --offline") != 0) {
        GTEST_SKIP() << "systemd-analyze security --offline needs systemd 252";
    }
    takt::test::TempDir dir;
    const std::string name = GetParam();
    const std::string as = name == "takt@.service" ? "takt@line2.service" : name;
    const auto path = unitCopy(dir, name, as);
    ASSERT_FALSE(path.empty());
    const takt::test::RunResult r =
        takt::test::runShell("systemd-analyze security --offline=true --no-pager " + path.string(),
                             {.capture = takt::test::Capture::Merged});
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(Overall exposure level for \S+: ([0-9.]+))"))) << r.out;
    // 0 is a fully sandboxed service, 10 a root one; takt needs the network, devices and
    // real-time scheduling, and stays in "OK" well below a plain root unit's 9.6.
    EXPECT_LE(std::stod(m[1].str()), 2.5) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Systemd, Unit, ::testing::Values("takt.service", "takt@.service"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                             return std::string(param.param) == "takt.service" ? std::string("Service")
                                                                               : std::string("Template");
                         });

} // namespace
} // namespace takt::io
