#pragma once
// Waiting for an effect with a deadline: the deadline is a hang guard, never a timing assertion.
#include <chrono>
#include <functional>
#include <thread>

namespace takt::test {

// Calls `step` (when given) and checks `done` every `interval` until `done` holds or `limit`
// passes; the last check comes after the limit.
inline bool waitUntil(const std::function<bool()>& done, std::chrono::nanoseconds limit,
                      std::chrono::nanoseconds interval, const std::function<void()>& step = {}) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (step) {
            step();
        }
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(interval);
    }
    return done();
}

} // namespace takt::test
