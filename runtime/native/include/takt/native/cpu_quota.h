#pragma once
// How many CPUs the cgroup v2 CPU quota of takt allows (systemd's CPUQuota=, a container's
// --cpus): the native tier's compile starts no more threads than that (compile_threads.cpp),
// since threads beyond it only wait for each other's slices of the quota.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace takt::native {

// The text of a cpu.max file: "<quota> <period>" in microseconds, or "max <period>" for none.
// The CPUs the quota allows, rounded up (150000 100000: 2); nullopt for no quota and for text
// that is not cpu.max's.
[[nodiscard]] inline std::optional<unsigned> quotaCpus(std::string_view cpuMax) noexcept {
    while (!cpuMax.empty() && (cpuMax.back() == '\n' || cpuMax.back() == ' ')) {
        cpuMax.remove_suffix(1);
    }
    const std::size_t space = cpuMax.find(' ');
    if (space == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view quotaText = cpuMax.substr(0, space);
    const std::string_view periodText = cpuMax.substr(space + 1);
    const auto number = [](std::string_view text, std::uint64_t& out) {
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return ec == std::errc{} && end == text.data() + text.size() && out > 0;
    };
    std::uint64_t quota = 0;
    std::uint64_t period = 0;
    if (quotaText == "max" || !number(quotaText, quota) || !number(periodText, period)) {
        return std::nullopt;
    }
    constexpr std::uint64_t kMost = 4096; // more than any CPU count: a quota that limits nothing
    return static_cast<unsigned>(std::min(kMost, (quota + period - 1) / period));
}

// The smallest quota of takt's cgroup and of the cgroups above it (the unit's slice may have
// one): /proc/self/cgroup's cgroup v2 line "0::<path>", each level's cpu.max under `root`.
// nullopt without cgroup v2 or without a quota. The paths are parameters for the tests.
[[nodiscard]] inline std::optional<unsigned> cgroupCpus(const std::string& root = "/sys/fs/cgroup",
                                                        const std::string& self = "/proc/self/cgroup") {
    std::ifstream cgroups(self);
    std::string line;
    std::string path; // stays empty without a cgroup v2 line
    while (std::getline(cgroups, line)) {
        if (line.starts_with("0::")) {
            path = line.substr(3);
            break;
        }
    }
    if (!path.starts_with('/') || path.find("/..") != std::string::npos) {
        return std::nullopt;
    }
    std::optional<unsigned> least;
    for (;;) {
        std::ifstream file(root + (path == "/" ? std::string() : path) + "/cpu.max");
        std::string text;
        if (std::getline(file, text)) {
            if (const std::optional<unsigned> cpus = quotaCpus(text); cpus && (!least || *cpus < *least)) {
                least = cpus;
            }
        }
        if (path == "/") {
            return least;
        }
        const std::size_t slash = path.rfind('/');
        path = slash == 0 ? "/" : path.substr(0, slash);
    }
}

} // namespace takt::native
