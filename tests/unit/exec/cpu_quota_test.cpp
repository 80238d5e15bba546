// The CPU quota of takt's cgroup, which bounds the threads of a native-tier compile.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "takt/native/cpu_quota.h"

namespace takt::native {
namespace {

namespace fs = std::filesystem;

TEST(CpuQuota, CpuMaxTextGivesTheCpusRoundedUp) {
    EXPECT_EQ(quotaCpus("100000 100000\n"), 1U);
    EXPECT_EQ(quotaCpus("150000 100000"), 2U);
    EXPECT_EQ(quotaCpus("50000 100000\n"), 1U);
    EXPECT_EQ(quotaCpus("400000 100000"), 4U);
    EXPECT_EQ(quotaCpus("max 100000\n"), std::nullopt);
    for (const char* bad : {"", "100000", "x 100000", "100000 0", "0 100000", "-1 100000", "100000 100000 7"}) {
        EXPECT_EQ(quotaCpus(bad), std::nullopt) << bad;
    }
}

class CgroupTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("takt-cpu-quota-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(root_);
        fs::create_directories(root_ / "system.slice" / "takt.service");
    }
    void TearDown() override { fs::remove_all(root_); }
    void write(const fs::path& file, const std::string& text) { std::ofstream(root_ / file) << text; }
    std::optional<unsigned> cpus() { return cgroupCpus(root_.string(), (root_ / "self").string()); }
    fs::path root_;
};

TEST_F(CgroupTree, TheSmallestQuotaOfTheCgroupAndItsParentsCounts) {
    write("self", "0::/system.slice/takt.service\n");
    EXPECT_EQ(cpus(), std::nullopt); // no cpu.max anywhere
    write("system.slice/takt.service/cpu.max", "max 100000\n");
    EXPECT_EQ(cpus(), std::nullopt);
    write("system.slice/takt.service/cpu.max", "300000 100000\n"); // CPUQuota=300%
    EXPECT_EQ(cpus(), 3U);
    write("system.slice/cpu.max", "100000 100000\n"); // the slice allows less
    EXPECT_EQ(cpus(), 1U);
    write("cpu.max", "50000 100000\n"); // the root's own file (not in a real hierarchy) is read too
    EXPECT_EQ(cpus(), 1U);
}

TEST_F(CgroupTree, NoCgroupV2LineMeansNoQuota) {
    write("system.slice/takt.service/cpu.max", "100000 100000\n");
    write("self", "1:cpu,cpuacct:/system.slice/takt.service\n"); // cgroup v1 only
    EXPECT_EQ(cpus(), std::nullopt);
    write("self", "0::/system.slice/../takt.service\n");
    EXPECT_EQ(cpus(), std::nullopt);
    EXPECT_EQ(cgroupCpus(root_.string(), (root_ / "missing").string()), std::nullopt);
    write("self", "0::/system.slice/takt.service\n");
    EXPECT_EQ(cpus(), 1U);
}

} // namespace
} // namespace takt::native
