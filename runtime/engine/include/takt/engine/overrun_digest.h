#pragma once
// Cycle overruns as an engineer reads them: each says whether the cycle was released late (the
// scan thread was not scheduled in time: the machine was busy) or ran long (the program, or
// the I/O copy, took longer than the cycle), and repeated ones are summarised — the first of a
// burst at once, then one summary with a count per interval — so that a busy machine's hundred
// overruns neither flood the log nor push faults out of an event list. Used off the scan
// thread, by `takt run`'s log and by the control endpoint's events (docs/runtime-control.md).
#include <cstdint>
#include <string>

#include "takt/engine/scan_loop.h"

namespace takt::engine {

enum class OverrunCause : std::uint8_t { LateRelease, LongExecution };

// The larger share of release-to-end time (lateness + execution) decides: a cycle that started
// 1.2 ms late and ran 25 us was released late; one that started on time and ran 12 ms ran long.
[[nodiscard]] OverrunCause overrunCause(const ScanEvent& overrun) noexcept;
[[nodiscard]] const char* overrunCauseName(OverrunCause c) noexcept; // "late_release" | "long_execution"

// One overrun as a log line: "cycle 812 released 1.2ms late (the scan thread was not scheduled
// in time), ran 24.9us; 1 release skipped".
[[nodiscard]] std::string overrunText(const ScanEvent& overrun);

// What the overruns after the first of an interval add up to.
struct OverrunSummary {
    std::uint64_t count = 0;
    std::uint64_t lateRelease = 0;
    std::uint64_t longExecution = 0;
    std::uint64_t missed = 0; // releases skipped
    std::uint64_t lastCycle = 0;
    std::int64_t maxLateNs = 0;
    std::int64_t maxExecNs = 0;
    std::int64_t intervalNs = 0;
};
// "37 more cycle overruns since the last report (30 late releases, up to 1.2ms late; 7 long
// executions, up to 12.1ms), the last in cycle 9120; 40 releases skipped".
[[nodiscard]] std::string overrunSummaryText(const OverrunSummary& s);

class OverrunDigest {
public:
    static constexpr std::int64_t kDefaultIntervalNs = 10'000'000'000; // 10 s

    explicit OverrunDigest(std::int64_t intervalNs = kDefaultIntervalNs) : intervalNs_(intervalNs) {}

    // An overrun: true when it is to be reported on its own (the first after a quiet interval);
    // otherwise it is counted into the next summary.
    bool add(const ScanEvent& overrun);
    // True with `out` filled once the interval that counted overruns has passed at `nowNs`
    // (CLOCK_MONOTONIC, like ScanEvent::timeNs); the next overrun then opens a new interval.
    bool due(std::int64_t nowNs, OverrunSummary& out);
    // The overruns counted so far, whatever the time (on stop); false when there are none.
    bool flush(OverrunSummary& out);

private:
    std::int64_t intervalNs_;
    std::int64_t windowEndNs_ = 0; // the interval opened by the last overrun reported on its own
    bool open_ = false;
    OverrunSummary pending_;
};

} // namespace takt::engine
