#pragma once
// A triple buffer: one writer thread hands the newest of a stream of fixed-size byte slots to one
// reader thread, and neither ever waits for the other. The writer fills a slot nobody reads, then
// swaps it with the middle one in one atomic exchange; the reader swaps its slot with the middle
// one only when the writer published a newer one. What the reader holds stays valid (and its
// own) until its next refresh(), however long it keeps it; what the writer fills is its own
// until publish().
//
// The base cycle and the task threads exchange the process image through it
// (task_exchange.h), and so do the scan thread and a driver's own thread (io-drivers,
// scan_exchange.h): no lock on a scan thread (docs/runtime-control.md).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace takt::engine {

// One writer thread, one reader thread; sized off the cycle. Two threads may take turns at one
// side when something else orders them (a lock of their own, a join).
class TripleBuffer {
public:
    // Off the cycle: three zeroed slots of `bytes`; the reader's slot reads as zeros.
    void resize(std::size_t bytes) {
        size_ = bytes;
        bytes_.assign(3 * bytes, 0);
        middle_.store(1, std::memory_order_relaxed);
        back_ = 0;
        front_ = 2;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

    // Writer: the slot to fill, then publish() it. After a publish the slot is another one with
    // older contents: a writer that changes only part of it copies the rest first.
    [[nodiscard]] std::uint8_t* back() noexcept { return bytes_.data() + back_ * size_; }
    void publish() noexcept {
        // Release: the slot's bytes are visible to the reader that takes it.
        back_ = static_cast<std::uint8_t>(
            middle_.exchange(static_cast<std::uint8_t>(back_ | kFresh), std::memory_order_acq_rel) & ~kFresh);
    }

    // Reader: take the newest published slot (false when there is none newer than front()).
    bool refresh() noexcept {
        if ((middle_.load(std::memory_order_relaxed) & kFresh) == 0) {
            return false;
        }
        front_ = static_cast<std::uint8_t>(middle_.exchange(front_, std::memory_order_acq_rel) & ~kFresh);
        return true;
    }
    [[nodiscard]] const std::uint8_t* front() const noexcept { return bytes_.data() + front_ * size_; }

private:
    static constexpr std::uint8_t kFresh = 4; // in middle_: the slot was published and not taken yet
    std::vector<std::uint8_t> bytes_;         // three slots of size_ bytes
    std::size_t size_ = 0;
    std::atomic<std::uint8_t> middle_{1};
    std::uint8_t back_ = 0;  // writer's
    std::uint8_t front_ = 2; // reader's
};

} // namespace takt::engine
