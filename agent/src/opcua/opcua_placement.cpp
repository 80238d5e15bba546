// The OPC UA server process below the scan and off its CPUs (opcua_placement.h).
#include "takt/agent/opcua_placement.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace takt::agent {

OpcuaPlacement placeOpcua(const std::vector<int>& allowed, const std::vector<int>& scanCpus) {
    OpcuaPlacement out;
    for (const int cpu : allowed) {
        if (std::find(scanCpus.begin(), scanCpus.end(), cpu) == scanCpus.end()) {
            out.cpus.push_back(cpu);
        }
    }
    if (out.cpus.empty()) {
        out.cpus = allowed;
        out.everyCpu = !scanCpus.empty();
    }
    std::sort(out.cpus.begin(), out.cpus.end());
    out.cpus.erase(std::unique(out.cpus.begin(), out.cpus.end()), out.cpus.end());
    return out;
}

std::string cpuList(const std::vector<int>& cpus) {
    std::vector<int> sorted = cpus;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) {
            ++j;
        }
        out += fmt::format("{}{}", out.empty() ? "" : ",", sorted[i]);
        if (j > i) {
            out += fmt::format("-{}", sorted[j]);
        }
        i = j + 1;
    }
    return out;
}

namespace {

// The calling thread's CPU mask as a list; false (and `why`) when it cannot be read.
bool threadCpus(std::vector<int>& out, std::string& why) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::sched_getaffinity(0, sizeof mask, &mask) != 0) {
        why = std::strerror(errno);
        return false;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &mask)) {
            out.push_back(cpu);
        }
    }
    return true;
}

// Moves the calling thread onto `cpus`; "" or why not.
std::string setThreadCpus(const std::vector<int>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : cpus) {
        CPU_SET(cpu, &set);
    }
    return ::sched_setaffinity(0, sizeof set, &set) == 0 ? std::string() : std::string(std::strerror(errno));
}

} // namespace

std::string lowerForOpcua(const std::vector<int>& scanCpus) {
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    std::string problems;
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, tid);
    const int nice = errno == 0 ? std::max(current, kOpcuaNice) : kOpcuaNice;
    if (::setpriority(PRIO_PROCESS, tid, nice) != 0) {
        problems += fmt::format("; nice {} not applied ({})", nice, std::strerror(errno));
    }
    std::vector<int> allowed;
    std::string why;
    if (!threadCpus(allowed, why)) {
        return fmt::format("the server process runs at nice {} on the CPUs of takt (its CPU mask unknown: {}){}", nice,
                           why, problems);
    }
    const OpcuaPlacement placed = placeOpcua(allowed, scanCpus);
    if (const std::string failed = setThreadCpus(placed.cpus); !failed.empty()) {
        problems += fmt::format("; CPU affinity {} not applied ({})", cpuList(placed.cpus), failed);
    }
    if (scanCpus.empty()) {
        return fmt::format("the server process runs at nice {} on CPUs {} (no cpu_affinity: the scan may run on "
                           "any of them){}",
                           nice, cpuList(placed.cpus), problems);
    }
    if (placed.everyCpu) {
        return fmt::format("the server process runs at nice {} on CPUs {}: the scan's cpu_affinity {} leaves no "
                           "other CPU, so it shares the scan's{}",
                           nice, cpuList(placed.cpus), cpuList(scanCpus), problems);
    }
    return fmt::format("the server process runs at nice {} on CPUs {} (the scan's CPUs {} left out){}", nice,
                       cpuList(placed.cpus), cpuList(scanCpus), problems);
}

std::string moveOffScanCpus(const std::vector<int>& scanCpus) {
    std::vector<int> allowed;
    std::string why;
    if (scanCpus.empty()) {
        return "";
    }
    if (!threadCpus(allowed, why)) {
        return fmt::format("the other threads run on takt's CPUs (its CPU mask unknown: {})", why);
    }
    const OpcuaPlacement placed = placeOpcua(allowed, scanCpus);
    if (placed.everyCpu) {
        return fmt::format("the scan's CPUs {} are every CPU takt may use: its other threads share them",
                           cpuList(scanCpus));
    }
    if (placed.cpus == allowed) {
        return "";
    }
    if (const std::string failed = setThreadCpus(placed.cpus); !failed.empty()) {
        return fmt::format("the other threads could not leave the scan's CPUs {} ({})", cpuList(scanCpus), failed);
    }
    return fmt::format("the other threads (control, web page, drivers, RETAIN writer, servers) run on CPUs {}, "
                       "off the scan's CPUs {}",
                       cpuList(placed.cpus), cpuList(scanCpus));
}

} // namespace takt::agent
