// The benchmark programs (bench/programs/*.st) compiled and run on the VM compute the same
// `check` as their hand-written native twins (bench/native) after the same scans, so the
// side-by-side benchmark compares equal work. REAL/LREAL work is done in the same widths and
// order on both sides with the same libm, so every program is compared exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "../../../bench/native/st_program.h"
#include "../../../bench/native/twins.h"
#include "support/paths.h"

namespace takt::bench {
namespace {

// 600 scans: past fb_calls' setpoint flip at scan 500 and twelve timers_edges periods.
constexpr int kScans = 600;
constexpr int kCompareEvery = 50;

class BenchProgramTwin : public ::testing::TestWithParam<std::string> {};

TEST_P(BenchProgramTwin, CheckEqualsNativeTwinScanByScan) {
    const std::string program = GetParam();
    StProgram st;
    std::string error;
    ASSERT_TRUE(st.load(std::string(TAKT_SOURCE_DIR) + "/bench/programs/" + program + ".st", error)) << error;
    bool distinct = false;
    const bool known = withTwin(program, [&]<typename Twin>() {
        Twin twin;
        double first = 0.0;
        for (int n = 0; n < kScans; ++n) {
            ASSERT_TRUE(st.scan()) << "scan " << n << ": " << st.faultMessage();
            scanTwin(twin, n * StProgram::kScanNs);
            if ((n + 1) % kCompareEvery == 0 || n == 0) {
                double check = 0.0;
                ASSERT_TRUE(st.readLreal("check", check));
                ASSERT_EQ(check, twin.check) << program << " after " << n + 1 << " scans";
                if (n == 0) {
                    first = check;
                } else if (check != first) {
                    distinct = true;
                }
            }
        }
    });
    ASSERT_TRUE(known) << "no native twin for " << program;
    // The value moves over the run, so equality is not two constants agreeing.
    EXPECT_TRUE(distinct) << program << ": check never changed";
}

INSTANTIATE_TEST_SUITE_P(Programs, BenchProgramTwin,
                         ::testing::Values("int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

} // namespace
} // namespace takt::bench
