#include "takt/engine/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace takt::engine {
namespace {

// Single-writer increment: a load and a store, no locked read-modify-write on the scan path.
void bump(std::atomic<std::uint64_t>& a, std::uint64_t by = 1) noexcept {
    a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

} // namespace

std::size_t LatencyHistogram::bucketOf(std::uint64_t ns) noexcept {
    if (ns < kSub) {
        return static_cast<std::size_t>(ns);
    }
    const unsigned e = static_cast<unsigned>(std::bit_width(ns)) - 1; // floor(log2 ns) >= kSubBits
    if (e > kMaxExponent) {
        return kBuckets - 1;
    }
    const auto mantissa = static_cast<std::size_t>((ns >> (e - kSubBits)) & (kSub - 1));
    return static_cast<std::size_t>(e - kSubBits + 1) * kSub + mantissa;
}

std::int64_t LatencyHistogram::bucketLow(std::size_t index) noexcept {
    if (index < kSub) {
        return static_cast<std::int64_t>(index);
    }
    const auto e = static_cast<unsigned>(index / kSub) + kSubBits - 1;
    const std::uint64_t m = index % kSub;
    return static_cast<std::int64_t>((kSub + m) << (e - kSubBits));
}

std::int64_t LatencyHistogram::bucketHigh(std::size_t index) noexcept {
    if (index + 1 >= kBuckets) {
        return static_cast<std::int64_t>(std::uint64_t{1} << (kMaxExponent + 1));
    }
    return bucketLow(index + 1);
}

void LatencyHistogram::record(std::int64_t ns) noexcept {
    const std::int64_t v = std::max<std::int64_t>(ns, 0);
    bump(buckets_[bucketOf(static_cast<std::uint64_t>(v))]);
    const std::uint64_t n = count_.load(std::memory_order_relaxed);
    if (n == 0 || v < min_.load(std::memory_order_relaxed)) {
        min_.store(v, std::memory_order_relaxed);
    }
    if (n == 0 || v > max_.load(std::memory_order_relaxed)) {
        max_.store(v, std::memory_order_relaxed);
    }
    sum_.store(sum_.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    // Published last (release), so a reader that sees the count sees the bucket it covers.
    count_.store(n + 1, std::memory_order_release);
}

void LatencyHistogram::reset() noexcept {
    for (auto& b : buckets_) {
        b.store(0, std::memory_order_relaxed);
    }
    count_.store(0, std::memory_order_relaxed);
    min_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
    sum_.store(0, std::memory_order_relaxed);
}

std::int64_t LatencyHistogram::percentile(double fraction) const noexcept {
    std::uint64_t total = 0;
    for (const auto& b : buckets_) {
        total += b.load(std::memory_order_relaxed);
    }
    if (total == 0) {
        return 0;
    }
    const double clamped = std::clamp(fraction, 0.0, 1.0);
    // Rank of the record that the percentile names (1-based, at least the first one).
    const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(clamped * double(total))));
    std::uint64_t seen = 0;
    const std::int64_t maxSeen = max_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < kBuckets; ++i) {
        seen += buckets_[i].load(std::memory_order_relaxed);
        if (seen >= rank) {
            if (i + 1 == kBuckets) {
                return maxSeen; // the open-ended top bucket
            }
            // Exact region: the value itself; above it the bucket's last value.
            const std::int64_t edge = i < kSub ? bucketLow(i) : bucketHigh(i) - 1;
            return std::min(edge, maxSeen);
        }
    }
    return maxSeen;
}

HistogramSummary LatencyHistogram::summary() const noexcept {
    HistogramSummary s;
    s.count = count_.load(std::memory_order_acquire);
    if (s.count == 0) {
        return s;
    }
    s.min = min_.load(std::memory_order_relaxed);
    s.max = max_.load(std::memory_order_relaxed);
    s.mean = sum_.load(std::memory_order_relaxed) / static_cast<std::int64_t>(s.count);
    s.p50 = percentile(0.50);
    s.p99 = percentile(0.99);
    s.p999 = percentile(0.999);
    return s;
}

std::vector<HistogramBucket> LatencyHistogram::buckets() const {
    std::vector<HistogramBucket> out;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        const std::uint64_t c = buckets_[i].load(std::memory_order_relaxed);
        if (c != 0) {
            out.push_back({bucketLow(i), bucketHigh(i), c});
        }
    }
    return out;
}

} // namespace takt::engine
