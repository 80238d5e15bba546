#pragma once
// The one futex wrapper: a thread sleeps on a 32-bit word without a lock, and a wake costs one
// system call. Scan threads, the debugger's halt and the drivers' wake-ups use it where a
// condition variable's notify would take an internal lock that a lower-priority thread can hold.
#include <atomic>
#include <cstdint>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace takt::common {

inline constexpr std::int64_t kFutexNsPerS = 1'000'000'000;

// Sleeps while `word` holds `seen`: until CLOCK_MONOTONIC `untilNs` when it is >= 0 (an absolute
// time, as FUTEX_WAIT_BITSET takes it), else until a wake. May return early (a signal, a spurious
// wake-up): callers check what they wait for again.
inline void futexWait(const std::atomic<std::uint32_t>& word, std::uint32_t seen, std::int64_t untilNs) noexcept {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(untilNs / kFutexNsPerS);
    ts.tv_nsec = static_cast<long>(untilNs % kFutexNsPerS);
    // The kernel only compares the word; it never writes through the pointer.
    auto* w = const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&word));
    (void)syscall(SYS_futex, w, FUTEX_WAIT_BITSET_PRIVATE, seen, untilNs >= 0 ? &ts : nullptr, nullptr,
                  FUTEX_BITSET_MATCH_ANY);
}

// Sleeps while `word` holds `seen`, at most `timeoutNs` from now (a relative time).
inline void futexWaitFor(const std::atomic<std::uint32_t>& word, std::uint32_t seen, std::int64_t timeoutNs) noexcept {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(timeoutNs / kFutexNsPerS);
    ts.tv_nsec = static_cast<long>(timeoutNs % kFutexNsPerS);
    auto* w = const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&word));
    (void)syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
}

// Wakes every thread sleeping on `word`. Any thread; never blocks.
inline void futexWake(std::atomic<std::uint32_t>& word) noexcept {
    (void)syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr,
                  0);
}

} // namespace takt::common
