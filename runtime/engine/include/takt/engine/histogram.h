#pragma once
// A fixed-size log-linear histogram of durations in nanoseconds (execution time, start
// lateness). Recording is O(1), never allocates and never locks, so the scan thread records
// every cycle. One thread records; any thread may read a summary at the same time: buckets are
// relaxed atomics, so a reader sees every bucket value that was written, possibly one record
// behind another bucket, which is harmless for percentiles.
//
// Layout: values below 2^kSubBits are exact; above, every power of two is split into
// 2^kSubBits linear sub-buckets, so a bucket is at most 1/32 (3.1 %) of its value wide.
// The top bucket holds everything at or above 2^kMaxExponent ns (about 39 hours).
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace takt::engine {

struct HistogramSummary {
    std::uint64_t count = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::int64_t mean = 0;
    std::int64_t p50 = 0;
    std::int64_t p99 = 0;
    std::int64_t p999 = 0;
};

// One non-empty bucket as exported (bench JSON, SVG).
struct HistogramBucket {
    std::int64_t low = 0;  // inclusive
    std::int64_t high = 0; // exclusive
    std::uint64_t count = 0;
};

class LatencyHistogram {
public:
    static constexpr unsigned kSubBits = 5;
    static constexpr unsigned kSub = 1u << kSubBits;
    static constexpr unsigned kMaxExponent = 47;
    static constexpr std::size_t kBuckets = (kMaxExponent - kSubBits + 2) * kSub;

    LatencyHistogram() { reset(); }
    LatencyHistogram(const LatencyHistogram&) = delete;
    LatencyHistogram& operator=(const LatencyHistogram&) = delete;

    // Single writer. Negative values (a clock that woke early) count as 0.
    void record(std::int64_t ns) noexcept;
    // Not concurrent with record().
    void reset() noexcept;

    [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    // Any thread.
    [[nodiscard]] HistogramSummary summary() const noexcept;
    // The value below which `fraction` (0..1) of the records lie: the upper edge of the bucket
    // that holds that rank, clamped to the largest value seen. 0 when empty.
    [[nodiscard]] std::int64_t percentile(double fraction) const noexcept;
    [[nodiscard]] std::vector<HistogramBucket> buckets() const;

    [[nodiscard]] static std::size_t bucketOf(std::uint64_t ns) noexcept;
    [[nodiscard]] static std::int64_t bucketLow(std::size_t index) noexcept;
    [[nodiscard]] static std::int64_t bucketHigh(std::size_t index) noexcept;

private:
    std::array<std::atomic<std::uint64_t>, kBuckets> buckets_;
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::int64_t> min_{0};
    std::atomic<std::int64_t> max_{0};
    std::atomic<std::int64_t> sum_{0};
};

} // namespace takt::engine
