// OutputLatch (driver_support.h): the %Q bytes the loopback and simulated drivers hand on, with
// the safe state latched over them.
#include <array>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "driver_support.h"

namespace takt::io::detail {
namespace {

std::vector<std::uint8_t> held(OutputLatch& latch) {
    std::vector<std::uint8_t> out(latch.size(), 0xEE);
    latch.read(out);
    return out;
}

TEST(OutputLatch, PassesOutputsUntilTheSafeStateIsLatchedAndAgainAfterRelease) {
    OutputLatch latch;
    latch.resize(4);
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{0, 0, 0, 0}));
    const std::array<std::uint8_t, 6> outputs{1, 2, 3, 4, 5, 6}; // more than it holds
    latch.write(outputs);
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{1, 2, 3, 4}));

    // Fewer safe values than bytes: the rest are 0, and the program's writes are ignored.
    const std::array<std::uint8_t, 2> safe{9, 8};
    latch.setSafe(safe);
    latch.latchSafe();
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{9, 8, 0, 0}));
    latch.write(outputs);
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{9, 8, 0, 0}));

    latch.release();
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{9, 8, 0, 0})); // until the next write
    const std::array<std::uint8_t, 2> shorter{7, 7};
    latch.write(shorter);
    EXPECT_EQ(held(latch), (std::vector<std::uint8_t>{7, 7, 0, 0}));

    // A shorter destination gets what fits.
    std::array<std::uint8_t, 1> one{};
    latch.read(one);
    EXPECT_EQ(one[0], 7);
}

} // namespace
} // namespace takt::io::detail
