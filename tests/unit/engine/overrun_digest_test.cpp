// Cycle overruns classified (late release or long execution) and summed up per interval, as
// `takt run`'s log and the control endpoint's events report them.
#include <gtest/gtest.h>

#include "takt/engine/overrun_digest.h"

namespace takt::engine {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kS = 1'000'000'000;

ScanEvent overrun(std::uint64_t cycle, std::int64_t atNs, std::int64_t execNs, std::int64_t lateNs) {
    ScanEvent e;
    e.kind = ScanEventKind::CycleOverrun;
    e.cycle = cycle;
    e.timeNs = atNs;
    e.valueNs = execNs;
    e.lateNs = lateNs;
    e.missed = 1;
    return e;
}

// A cycle that started 1.2 ms late and ran 25 us used to be logged as "took 24.9us".
TEST(OverrunDigest, SaysWhetherTheCycleStartedLateOrRanLong) {
    const ScanEvent late = overrun(812, 0, 24'900, 1'200'000);
    EXPECT_EQ(overrunCause(late), OverrunCause::LateRelease);
    EXPECT_STREQ(overrunCauseName(overrunCause(late)), "late_release");
    EXPECT_EQ(
        overrunText(late),
        "cycle 812 released 1.2ms late (the scan thread was not scheduled in time), ran 24.9us; 1 release skipped");
    const ScanEvent slow = overrun(9, 0, 12 * kMs, 3'000);
    EXPECT_EQ(overrunCause(slow), OverrunCause::LongExecution);
    EXPECT_EQ(overrunText(slow), "cycle 9 ran 12.0ms (long execution: the program and its I/O took longer than the "
                                 "cycle), released 3.0us late; 1 release skipped");
}

TEST(OverrunDigest, TheFirstOfABurstAloneThenOneSummaryPerInterval) {
    OverrunDigest d(10 * kS);
    OverrunSummary s;
    EXPECT_TRUE(d.add(overrun(1, 1 * kS, 20'000, 2 * kMs)));
    EXPECT_FALSE(d.due(2 * kS, s));
    // 102 more within the interval: counted, not reported one by one.
    for (int i = 0; i < 102; ++i) {
        EXPECT_FALSE(d.add(overrun(2 + i, 2 * kS + i * 50 * kMs, i % 3 == 0 ? 15 * kMs : 30'000, 1 * kMs)));
    }
    EXPECT_FALSE(d.due(10 * kS, s));
    ASSERT_TRUE(d.due(11 * kS, s));
    EXPECT_EQ(s.count, 102u);
    EXPECT_EQ(s.longExecution, 34u);
    EXPECT_EQ(s.lateRelease, 68u);
    EXPECT_EQ(s.lastCycle, 103u);
    EXPECT_EQ(s.maxExecNs, 15 * kMs);
    EXPECT_EQ(s.maxLateNs, 1 * kMs);
    EXPECT_EQ(overrunSummaryText(s), "102 more cycle overruns since the last report (68 late releases, up to 1.0ms "
                                     "late; 34 long executions, up to 15.0ms), the last in cycle 103; 102 releases "
                                     "skipped");
    // Still overrunning: counted into the next interval's summary, not reported alone.
    EXPECT_FALSE(d.add(overrun(200, 12 * kS, 20'000, 2 * kMs)));
    EXPECT_FALSE(d.due(20 * kS, s));
    ASSERT_TRUE(d.due(21 * kS, s));
    EXPECT_EQ(s.count, 1u);
    // A quiet interval: the next overrun is reported on its own again.
    EXPECT_FALSE(d.due(40 * kS, s));
    EXPECT_TRUE(d.add(overrun(300, 41 * kS, 20'000, 2 * kMs)));
    // On stop, what was counted is taken whatever the time.
    EXPECT_FALSE(d.add(overrun(301, 42 * kS, 20'000, 2 * kMs)));
    ASSERT_TRUE(d.flush(s));
    EXPECT_EQ(s.count, 1u);
    EXPECT_FALSE(d.flush(s));
}

} // namespace
} // namespace takt::engine
