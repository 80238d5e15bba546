// The time a process was given (given_time.h).
#include "takt/agent/given_time.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

namespace takt::agent {

std::optional<std::chrono::nanoseconds> parseRunDelay(std::string_view schedstat) {
    // "<time on the CPU> <time waiting on a run queue> <timeslices>", each in ns or a count.
    const std::size_t first = schedstat.find(' ');
    if (first == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view rest = schedstat.substr(first + 1);
    unsigned long long ns = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), ns);
    if (ec != std::errc{} || end == rest.data() || (end != rest.data() + rest.size() && *end != ' ')) {
        return std::nullopt;
    }
    return std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(ns));
}

std::optional<std::chrono::nanoseconds> runDelay(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/schedstat", pid));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parseRunDelay(text);
}

void GivenTime::mark(pid_t pid, Clock::time_point now) {
    at_ = now;
    delay_ = runDelay(pid);
}

GivenTime::Clock::duration GivenTime::since(pid_t pid, Clock::time_point now) const {
    const Clock::duration wall = now - at_;
    if (!delay_) {
        return wall;
    }
    const std::optional<std::chrono::nanoseconds> delay = runDelay(pid);
    if (!delay || *delay < *delay_) {
        return wall;
    }
    const auto waited = std::chrono::duration_cast<Clock::duration>(*delay - *delay_);
    return waited >= wall ? Clock::duration::zero() : wall - waited;
}

} // namespace takt::agent
