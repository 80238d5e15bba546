#pragma once
// The values value subscriptions (var.subscribe) ask for, published by the scan thread at every
// cycle boundary (ARCHITECTURE.md "One change stream"). The control side builds a ValueWatch off
// the cycle (the ranges of every subscribed variable, resolved in one module, and the storage
// they are published into) and hands it over with a SetWatch command; from then on the scan
// thread copies those ranges into the watch after every cycle, inside a seqlock: no lock, no
// allocation, and a reader never makes the writer wait. The reader (the control thread) copies
// out a consistent set — every value from the same cycle boundary — and works out what changed
// on its own side, so the scan thread's cost is one copy of the subscribed bytes per cycle.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "takt/engine/scan_command.h"

namespace takt::engine {

class ValueWatch {
public:
    // Subscribed bytes of one watch (all sessions together): docs/control.md states the limits
    // that keep a watch below this.
    static constexpr std::size_t kMaxBytes = std::size_t{1} << 20;

    // `module` is the program the ranges were resolved in: the scan thread publishes only while
    // that program runs, so a watch that an online change made stale is never read at offsets
    // of another program. Ranges are copied; every one must lie inside its image (checked again
    // by the scan thread against the image it runs).
    ValueWatch(const bytecode::Module* module, std::vector<ImageRange> ranges);
    ValueWatch(const ValueWatch&) = delete;
    ValueWatch& operator=(const ValueWatch&) = delete;

    [[nodiscard]] std::span<const ImageRange> ranges() const { return ranges_; }
    // Where range `i`'s value starts in a read() copy; its length is ranges()[i].valueBytes().
    [[nodiscard]] std::uint32_t at(std::size_t i) const { return at_[i]; }
    [[nodiscard]] std::size_t bytes() const { return scratch_.size(); }
    [[nodiscard]] const bytecode::Module* module() const { return module_; }

    // Scan thread, at a cycle boundary: copies every range out of `imageOf(area)` (a span of
    // the image) and publishes them with `cycle`. A range outside its image publishes nothing
    // that cycle (the watch belongs to another program's layout).
    template <class ImageOf> void publish(std::uint64_t cycle, ImageOf&& imageOf) noexcept {
        for (std::size_t i = 0; i < ranges_.size(); ++i) {
            const ImageRange& r = ranges_[i];
            const std::span<std::uint8_t> image = imageOf(r.area);
            if (static_cast<std::size_t>(r.offset) + (r.isBit ? 1u : r.size) > image.size()) {
                return;
            }
            readRange(r, image.data(), scratch_.data() + at_[i]);
        }
        store(cycle);
    }

    // Any thread: a consistent copy of the last publication into `out` (resized to bytes()) and
    // the cycle it was taken at; false when nothing was published yet.
    bool read(std::vector<std::uint8_t>& out, std::uint64_t& cycle) const;

private:
    void store(std::uint64_t cycle) noexcept;

    const bytecode::Module* module_;
    std::vector<ImageRange> ranges_;
    std::vector<std::uint32_t> at_;
    std::vector<std::uint8_t> scratch_; // scan thread: the packed bytes before they are published
    std::size_t words_ = 0;
    // The published bytes as relaxed atomic words, so a reader racing the writer is well defined
    // (seqlock.h does the same for small values).
    std::unique_ptr<std::atomic<std::uint64_t>[]> published_;
    std::atomic<std::uint64_t> seq_{0};
    std::atomic<std::uint64_t> cycle_{0};
};

} // namespace takt::engine
