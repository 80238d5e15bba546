#include "takt/engine/value_watch.h"

#include <cstring>

namespace takt::engine {

ValueWatch::ValueWatch(const bytecode::Module* module, std::vector<ImageRange> ranges)
    : module_(module), ranges_(std::move(ranges)) {
    std::uint32_t at = 0;
    at_.reserve(ranges_.size());
    for (const ImageRange& r : ranges_) {
        at_.push_back(at);
        at += r.valueBytes();
    }
    scratch_.assign(at, 0);
    words_ = (scratch_.size() + 7) / 8;
    published_ = std::make_unique<std::atomic<std::uint64_t>[]>(words_ == 0 ? 1 : words_);
}

void ValueWatch::store(std::uint64_t cycle) noexcept {
    const std::uint64_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t w = 0; w < words_; ++w) {
        std::uint64_t word = 0;
        const std::size_t from = w * 8;
        std::memcpy(&word, scratch_.data() + from, std::min<std::size_t>(8, scratch_.size() - from));
        published_[w].store(word, std::memory_order_relaxed);
    }
    cycle_.store(cycle, std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
}

bool ValueWatch::read(std::vector<std::uint8_t>& out, std::uint64_t& cycle) const {
    out.resize(words_ * 8);
    for (;;) {
        const std::uint64_t s1 = seq_.load(std::memory_order_acquire);
        if (s1 == 0) {
            return false;
        }
        if ((s1 & 1u) != 0) {
            continue; // the scan thread is inside a store: a copy of a few KiB, retry
        }
        for (std::size_t w = 0; w < words_; ++w) {
            const std::uint64_t word = published_[w].load(std::memory_order_relaxed);
            std::memcpy(out.data() + w * 8, &word, 8);
        }
        cycle = cycle_.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (seq_.load(std::memory_order_relaxed) == s1) {
            break;
        }
    }
    out.resize(scratch_.size());
    return true;
}

} // namespace takt::engine
