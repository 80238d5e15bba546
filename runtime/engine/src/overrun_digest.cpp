// Cycle overruns classified and summarised (overrun_digest.h).
#include "takt/engine/overrun_digest.h"

#include <algorithm>

#include <fmt/format.h>

namespace takt::engine {

namespace {

// "24.9us", "1.2ms", "3.40s".
std::string duration(std::int64_t ns) {
    if (ns < 1'000'000) {
        return fmt::format("{:.1f}us", static_cast<double>(ns) / 1e3);
    }
    if (ns < 1'000'000'000) {
        return fmt::format("{:.1f}ms", static_cast<double>(ns) / 1e6);
    }
    return fmt::format("{:.2f}s", static_cast<double>(ns) / 1e9);
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

OverrunCause overrunCause(const ScanEvent& overrun) noexcept {
    return overrun.lateNs > overrun.valueNs ? OverrunCause::LateRelease : OverrunCause::LongExecution;
}

const char* overrunCauseName(OverrunCause c) noexcept {
    return c == OverrunCause::LateRelease ? "late_release" : "long_execution";
}

std::string overrunText(const ScanEvent& e) {
    const std::string skipped = plural(e.missed, "release", "releases") + " skipped";
    if (overrunCause(e) == OverrunCause::LateRelease) {
        return fmt::format("cycle {} released {} late (the scan thread was not scheduled in time), ran {}; {}", e.cycle,
                           duration(e.lateNs), duration(e.valueNs), skipped);
    }
    return fmt::format("cycle {} ran {} (long execution: the program and its I/O took longer than the cycle), "
                       "released {} late; {}",
                       e.cycle, duration(e.valueNs), duration(e.lateNs), skipped);
}

std::string overrunSummaryText(const OverrunSummary& s) {
    std::string causes;
    if (s.lateRelease != 0) {
        causes = fmt::format("{}, up to {} late", plural(s.lateRelease, "late release", "late releases"),
                             duration(s.maxLateNs));
    }
    if (s.longExecution != 0) {
        causes += fmt::format("{}{}, up to {}", causes.empty() ? "" : "; ",
                              plural(s.longExecution, "long execution", "long executions"), duration(s.maxExecNs));
    }
    return fmt::format("{} more {} since the last report ({}), the last in cycle {}; {} skipped", s.count,
                       s.count == 1 ? "cycle overrun" : "cycle overruns", causes, s.lastCycle,
                       plural(s.missed, "release", "releases"));
}

bool OverrunDigest::add(const ScanEvent& e) {
    if (!open_ || e.timeNs >= windowEndNs_) {
        // A quiet interval ended (its summary, if any, was taken by due() or is folded in now).
        if (pending_.count == 0) {
            open_ = true;
            windowEndNs_ = e.timeNs + intervalNs_;
            return true;
        }
    }
    ++pending_.count;
    (overrunCause(e) == OverrunCause::LateRelease ? pending_.lateRelease : pending_.longExecution) += 1;
    pending_.missed += e.missed;
    pending_.lastCycle = e.cycle;
    pending_.maxLateNs = std::max(pending_.maxLateNs, e.lateNs);
    pending_.maxExecNs = std::max(pending_.maxExecNs, e.valueNs);
    return false;
}

bool OverrunDigest::flush(OverrunSummary& out) {
    if (pending_.count == 0) {
        return false;
    }
    out = pending_;
    out.intervalNs = intervalNs_;
    pending_ = OverrunSummary{};
    return true;
}

bool OverrunDigest::due(std::int64_t nowNs, OverrunSummary& out) {
    if (!open_ || nowNs < windowEndNs_) {
        return false;
    }
    if (pending_.count == 0) {
        open_ = false; // quiet: the next overrun is reported on its own
        return false;
    }
    out = pending_;
    out.intervalNs = intervalNs_;
    pending_ = OverrunSummary{};
    // Overruns go on: the next interval counts from here, so a steady stream gives one line per
    // interval rather than a line and a summary each time.
    windowEndNs_ = nowNs + intervalNs_;
    return true;
}

} // namespace takt::engine
