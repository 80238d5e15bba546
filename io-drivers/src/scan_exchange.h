#pragma once
// How the scan thread and a driver's own thread hand over inputs and outputs without a lock
// (docs/runtime-control.md, "No lock a lower priority can hold"): a higher-priority task may
// preempt a driver's thread at any instruction, and the base cycle must not wait for it.
//
//   inputs (driver thread -> scan thread): a TripleBuffer (takt/engine/triple_buffer.h). The
//     driver's thread fills the back slot with what it read from the field, together with
//     whatever describes those values (inputs bad after a comm loss, which bytes are fresh), and
//     publishes it; readInputs() takes the newest slot at each cycle start. A value and its
//     quality flag always travel in one slot.
//   outputs (scan thread -> driver thread): an OutputExchange below, a TripleBuffer the scan
//     thread fills in writeOutputs() plus the safe state.
//   safe state (any thread -> driver thread): the safe image is stored before start
//     (setSafeImage(), in the driver's layout) and applySafeState() only sets an atomic latch;
//     from then on the driver's thread sends the safe image and ignores the program's outputs
//     until releaseSafeState() and the next writeOutputs() after it. The watchdog latches it while the scan thread may
//     be stuck in the program, so neither side waits for the other here either.
// A driver's threads may still share a lock of their own (the mqtt network and publisher
// threads do); the scan thread takes none, and only the scan thread calls writeOutputs() and
// releaseSafeState().
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "takt/engine/triple_buffer.h"

namespace takt::io::detail {

using engine::TripleBuffer;

class OutputExchange {
public:
    // What the driver's thread puts on the field now (take()).
    enum class Source : std::uint8_t {
        None,    // no outputs yet since start: leave the field as it is
        Program, // the program's outputs: program()
        Safe,    // the safe image: safeImage(), latched or released without new outputs since
    };

    // Off the cycle: `bytes` of outputs per slot in the driver's own layout, and `safeBytes` of
    // safe image (setSafe) in whatever layout the driver sends it from.
    void resize(std::size_t bytes, std::size_t safeBytes) {
        out_.resize(kHeader + bytes);
        safe_.assign(safeBytes, 0);
        latched_.store(false, std::memory_order_relaxed);
        releases_.store(0, std::memory_order_relaxed);
    }
    [[nodiscard]] std::size_t bytes() const noexcept { return out_.size() < kHeader ? 0 : out_.size() - kHeader; }
    [[nodiscard]] std::size_t safeBytes() const noexcept { return safe_.size(); }

    // Scan thread (writeOutputs): false while the safe state is latched, when the program's
    // outputs are to be ignored, and when never sized (a driver whose init() failed): back()
    // then has no slot. Otherwise fill back() whole and publish().
    [[nodiscard]] bool accepting() const noexcept {
        return out_.size() != 0 && !latched_.load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint8_t* back() noexcept { return out_.back() + kHeader; }
    void publish() noexcept {
        // The stamp says after which release the outputs were written (take()).
        if (out_.size() == 0) {
            return; // not sized (a driver whose init() failed)
        }
        const std::uint64_t stamp = releases_.load(std::memory_order_relaxed) + 1;
        std::memcpy(out_.back(), &stamp, kHeader);
        out_.publish();
    }

    // Control thread, after resize() and before the reader starts (Driver::setSafeImage): the
    // safe image the latch and a comm loss send, already in the driver's layout (zeros past
    // `safe`). The runtime's safe image is fixed at configure, so the latch copies nothing and
    // two latchers at once (the watchdog and the scan thread's fault latch) cannot hand the
    // reader a half-stored image.
    void setSafe(std::span<const std::uint8_t> safe) {
        std::fill(safe_.begin(), safe_.end(), 0);
        std::copy_n(safe.begin(), std::min(safe_.size(), safe.size()), safe_.begin());
    }
    // Any thread, never waits: the reader sends safeImage() from its next take().
    void latchSafe() noexcept {
        latched_.store(true, std::memory_order_release);
        latches_.fetch_add(1, std::memory_order_release);
    }
    // Scan thread: the program's outputs go out again from the next writeOutputs().
    void release() noexcept {
        releases_.fetch_add(1, std::memory_order_release);
        latched_.store(false, std::memory_order_release);
    }
    // Any thread: how many times the safe state was latched (a driver thread that sees it grow
    // writes the safe image at once rather than at its next poll).
    [[nodiscard]] std::uint64_t latches() const noexcept { return latches_.load(std::memory_order_acquire); }
    [[nodiscard]] bool latched() const noexcept { return latched_.load(std::memory_order_acquire); }

    // The reader (the driver's thread, or whichever thread a join handed it to): takes the
    // newest outputs and says which the field gets. program() stays valid and unchanged until
    // the next take(); safeImage() does not change after start.
    Source take() noexcept {
        const bool latched = latched_.load(std::memory_order_acquire);
        out_.refresh();
        if (latched) {
            return Source::Safe;
        }
        const std::uint64_t releases = releases_.load(std::memory_order_acquire);
        std::uint64_t stamp = 0;
        if (out_.size() != 0) {
            std::memcpy(&stamp, out_.front(), kHeader);
        }
        if (stamp == releases + 1) {
            return Source::Program;
        }
        return releases == 0 && stamp == 0 ? Source::None : Source::Safe;
    }
    [[nodiscard]] const std::uint8_t* program() const noexcept { return out_.front() + kHeader; }
    [[nodiscard]] std::span<const std::uint8_t> safeImage() const noexcept { return safe_; }

private:
    static constexpr std::size_t kHeader = sizeof(std::uint64_t);

    TripleBuffer out_;               // scan thread -> reader: [stamp][outputs]
    std::vector<std::uint8_t> safe_; // set before the reader starts, read-only after
    std::atomic<bool> latched_{false};
    std::atomic<std::uint64_t> releases_{0};
    std::atomic<std::uint64_t> latches_{0};
};

} // namespace takt::io::detail
