#pragma once
// The time a process was given: the wall time since a mark, less the time its main thread waited,
// runnable, for a CPU (the kernel's run delay, /proc/PID/schedstat).
//
// A supervisor that takes a child's silence for a hang must not count time the child could not
// run: a process below the others (the OPC UA server at nice 10) on a busy machine is starved,
// not hung, and ending it only makes it start again from nothing, starved again. A loop stuck in
// code runs (its time is given), a process blocked for good sleeps (given too): both still reach
// the deadline. Without schedstat (a kernel without CONFIG_SCHED_INFO) this is the wall time.
#include <chrono>
#include <optional>
#include <string_view>

#include <sys/types.h>

namespace takt::agent {

// The run delay (second field) of a /proc/PID/schedstat text; nullopt when it is not one.
[[nodiscard]] std::optional<std::chrono::nanoseconds> parseRunDelay(std::string_view schedstat);

// PID's run delay so far; nullopt when it cannot be read (no such process, no schedstat).
[[nodiscard]] std::optional<std::chrono::nanoseconds> runDelay(pid_t pid);

class GivenTime {
public:
    using Clock = std::chrono::steady_clock;

    // Starts counting for `pid` at `now`.
    void mark(pid_t pid, Clock::time_point now);
    // The time `pid` was given from the mark to `now` (never negative).
    [[nodiscard]] Clock::duration since(pid_t pid, Clock::time_point now) const;
    // Whether `pid` was given more than `limit` since the mark, or kWallCap times `limit` went by
    // whatever it was given (a loop stuck in code behind busy processes gets a small share too:
    // it must not take minutes to be seen); /proc is read only once the wall time is past `limit`.
    static constexpr int kWallCap = 6;
    [[nodiscard]] bool beyond(pid_t pid, Clock::time_point now, Clock::duration limit) const {
        const Clock::duration wall = now - at_;
        return wall > limit && (wall > kWallCap * limit || since(pid, now) > limit);
    }

private:
    Clock::time_point at_{};
    std::optional<std::chrono::nanoseconds> delay_; // the run delay at the mark
};

} // namespace takt::agent
