// The log-linear latency histogram: bucket layout, exact extremes, percentile precision.
#include <cmath>
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "takt/engine/histogram.h"

namespace takt::engine {
namespace {

TEST(Histogram, BucketsTileTheRangeWithoutGaps) {
    for (std::size_t i = 0; i + 1 < LatencyHistogram::kBuckets; ++i) {
        ASSERT_EQ(LatencyHistogram::bucketHigh(i), LatencyHistogram::bucketLow(i + 1)) << i;
        ASSERT_LT(LatencyHistogram::bucketLow(i), LatencyHistogram::bucketHigh(i)) << i;
        ASSERT_EQ(LatencyHistogram::bucketOf(static_cast<std::uint64_t>(LatencyHistogram::bucketLow(i))), i);
        ASSERT_EQ(LatencyHistogram::bucketOf(static_cast<std::uint64_t>(LatencyHistogram::bucketHigh(i) - 1)), i);
    }
}

TEST(Histogram, BucketWidthIsAtMostOneThirtySecondOfItsValue) {
    for (std::size_t i = LatencyHistogram::kSub; i + 1 < LatencyHistogram::kBuckets; ++i) {
        const double low = double(LatencyHistogram::bucketLow(i));
        const double width = double(LatencyHistogram::bucketHigh(i)) - low;
        ASSERT_LE(width / low, 1.0 / 32.0 + 1e-12) << i;
    }
}

TEST(Histogram, HugeValuesLandInTheTopBucket) {
    LatencyHistogram h;
    h.record(INT64_MAX);
    EXPECT_EQ(LatencyHistogram::bucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
    EXPECT_EQ(h.summary().max, INT64_MAX);
    EXPECT_EQ(h.percentile(1.0), INT64_MAX);
}

TEST(Histogram, EmptyHistogramSummarisesToZero) {
    const LatencyHistogram h;
    const HistogramSummary s = h.summary();
    EXPECT_EQ(s.count, 0u);
    EXPECT_EQ(s.p99, 0);
    EXPECT_TRUE(h.buckets().empty());
}

TEST(Histogram, MinMaxMeanAreExactAndNegativeCountsAsZero) {
    LatencyHistogram h;
    h.record(1000);
    h.record(-5);
    h.record(123456789);
    const HistogramSummary s = h.summary();
    EXPECT_EQ(s.count, 3u);
    EXPECT_EQ(s.min, 0);
    EXPECT_EQ(s.max, 123456789);
    EXPECT_EQ(s.mean, (1000 + 123456789) / 3);
}

TEST(Histogram, PercentilesOfAKnownDistributionWithinBucketPrecision) {
    LatencyHistogram h;
    std::vector<std::int64_t> values;
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> dist(10.0, 1.5); // ns, a long tail like lateness
    for (int i = 0; i < 100000; ++i) {
        values.push_back(static_cast<std::int64_t>(dist(rng)));
        h.record(values.back());
    }
    std::sort(values.begin(), values.end());
    for (const double q : {0.5, 0.9, 0.99, 0.999}) {
        const auto exact = double(values[static_cast<std::size_t>(std::ceil(q * double(values.size()))) - 1]);
        const auto approx = double(h.percentile(q));
        EXPECT_GE(approx, exact) << q; // the bucket's upper edge: never optimistic
        EXPECT_LE(approx, exact * (1.0 + 1.0 / 32.0) + 1.0) << q;
    }
    std::uint64_t total = 0;
    for (const HistogramBucket& b : h.buckets()) {
        total += b.count;
    }
    EXPECT_EQ(total, 100000u);
}

TEST(Histogram, SmallValuesAreExact) {
    LatencyHistogram h;
    for (int v = 0; v < 10; ++v) {
        h.record(v);
    }
    EXPECT_EQ(h.percentile(0.5), 4);
    EXPECT_EQ(h.percentile(1.0), 9);
}

} // namespace
} // namespace takt::engine
