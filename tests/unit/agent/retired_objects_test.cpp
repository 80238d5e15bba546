// What a debugging session unlinks from the stop map is freed once no task thread's run can read
// it: a thread that was in a run (odd count) when it was unlinked holds it until that run ends
// (its count moves); threads between runs (even) hold nothing.
#include "takt/agent/retired_objects.h"

#include <gtest/gtest.h>

#include <memory>

namespace takt::agent {
namespace {

TEST(RetiredObjects, AreFreedOnceEveryRunUnderWayAtTheUnlinkHasEnded) {
    RetiredObjects r;
    auto condition = std::make_shared<int>(1);
    const std::weak_ptr<int> watch = condition;
    // Thread 0 was in a run (3), thread 1 between runs (4).
    r.retire({std::move(condition)}, {3, 4});
    r.reclaim({3, 6});
    EXPECT_FALSE(watch.expired()) << "thread 0's run has not ended: it may still read the condition";
    EXPECT_EQ(r.objects(), 1u);
    r.reclaim({4, 6});
    EXPECT_TRUE(watch.expired());
    EXPECT_TRUE(r.empty());
}

TEST(RetiredObjects, NothingUnderWayFreesAtOnceAndBatchesGoOnTheirOwn) {
    RetiredObjects r;
    auto idle = std::make_shared<int>(1);
    auto busy = std::make_shared<int>(2);
    const std::weak_ptr<int> idleWatch = idle;
    const std::weak_ptr<int> busyWatch = busy;
    r.retire({std::move(busy)}, {7});
    r.retire({std::move(idle), nullptr}, {8});
    r.reclaim({7}); // a halted thread's run goes on: its count stands still
    EXPECT_TRUE(idleWatch.expired()) << "no run was under way when it was unlinked";
    EXPECT_FALSE(busyWatch.expired());
    r.reclaim({9});
    EXPECT_TRUE(busyWatch.expired());
}

TEST(RetiredObjects, AnOnlineChangeBetweenRetireAndReclaimFreesThem) {
    RetiredObjects r;
    auto recorder = std::make_shared<int>(1);
    const std::weak_ptr<int> watch = recorder;
    r.retire({std::move(recorder)}, {1});
    r.reclaim({1, 1}); // the new program brought a second task: every thread stood at the swap
    EXPECT_TRUE(watch.expired());
}

} // namespace
} // namespace takt::agent
