#pragma once
// Wakes a driver's own thread without a lock: a futex word that notify() bumps and wakes. The
// scan thread (after every cycle's outputs) and the watchdog (a safe state to write at once)
// call notify(), so a condition variable, whose notify takes an internal lock the sleeping
// driver thread also takes, would put a lock on them that a lower priority can hold
// (scan_exchange.h).
#include <atomic>
#include <chrono>
#include <cstdint>

#include "takt/common/futex.h"

namespace takt::io {

class Wakeup {
public:
    // Any thread; never blocks.
    void notify() noexcept {
        word_.fetch_add(1, std::memory_order_release);
        common::futexWake(word_);
    }

    // The driver's thread: the word now, then waitFor(seen, …) after checking what it waits for,
    // so a notify() in between is not lost.
    [[nodiscard]] std::uint32_t epoch() const noexcept { return word_.load(std::memory_order_acquire); }
    // Sleeps until a notify() after `seen` was read, or until `timeout`.
    void waitFor(std::uint32_t seen, std::chrono::nanoseconds timeout) {
        common::futexWaitFor(word_, seen, timeout.count());
    }

    // The driver's thread, holding `lock`: releases it, sleeps until a notify() after `seen` was
    // read or until `timeout`, and takes it again (as condition_variable::wait_for).
    template <typename Lock> void waitFor(Lock& lock, std::uint32_t seen, std::chrono::nanoseconds timeout) {
        lock.unlock();
        waitFor(seen, timeout);
        lock.lock();
    }

private:
    std::atomic<std::uint32_t> word_{0};
};

} // namespace takt::io
