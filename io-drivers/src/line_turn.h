// LineTurn: the turn on a serial line that several drivers share.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace takt::io::detail {

// The turn on a serial line shared by several drivers: granted in the order it was asked for. A
// driver retrying a silent slave back to back must not starve the others on the bus, and
// std::mutex promises no order (a thread that unlocks and locks again mostly wins).
class LineTurn {
public:
    void lock() {
        std::unique_lock guard(mutex_);
        const std::uint64_t ticket = next_++;
        served_.wait(guard, [&] { return serving_ == ticket; });
    }
    void unlock() {
        {
            const std::lock_guard guard(mutex_);
            ++serving_;
        }
        served_.notify_all();
    }

    // How many are waiting for their turn (for tests and diagnostics).
    [[nodiscard]] std::uint64_t waiting() {
        const std::lock_guard guard(mutex_);
        return next_ == serving_ ? 0 : next_ - serving_ - 1; // the one whose turn it is holds it
    }

private:
    std::mutex mutex_;
    std::condition_variable served_;
    std::uint64_t next_ = 0;    // the ticket the next asker gets
    std::uint64_t serving_ = 0; // the ticket whose turn it is
};

} // namespace takt::io::detail
