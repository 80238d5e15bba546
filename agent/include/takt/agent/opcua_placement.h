#pragma once
// Where the OPC UA server process runs beside the scan (docs/opcua.md "How it runs"): below it,
// at nice 10 like the endpoint's, the web server's and the RETAIN writer's threads, and off the
// CPUs [runtime.realtime] cpu_affinity and task_affinity pin the scan and task threads to, so a
// client's load on Node.js does not take the scan's core. When those pins cover every CPU takt may
// use, it runs on all of them (the log says so).
//
// The supervising thread applies both to itself before it starts the process: posix_spawn's child
// takes the nice level and the CPU mask of the thread that spawns it, and so does every thread
// Node.js starts in it, from its first instruction and on every restart, with no window in which
// it runs on the scan's core.
#include <string>
#include <vector>

namespace takt::agent {

constexpr int kOpcuaNice = 10;

struct OpcuaPlacement {
    std::vector<int> cpus; // the CPUs the process may run on, ascending
    bool everyCpu = false; // the scan's pins leave none of `allowed` free: all of them
};

// The CPUs of `allowed` (takt's own mask) that `scanCpus` (the scan and task threads' pins) leave
// free, or all of `allowed` when they leave none. An empty `scanCpus` leaves `allowed` as it is.
[[nodiscard]] OpcuaPlacement placeOpcua(const std::vector<int>& allowed, const std::vector<int>& scanCpus);

// "0,2-3": a list of CPUs as /proc's Cpus_allowed_list writes it.
[[nodiscard]] std::string cpuList(const std::vector<int>& cpus);

// Lowers the calling thread to kOpcuaNice (a thread already lower stays) and moves it off
// `scanCpus` as placeOpcua says; the line the log has about it ("the server process runs at nice
// 10 on CPUs 0 (the scan's CPUs 1 left out)"), naming what could not be applied.
[[nodiscard]] std::string lowerForOpcua(const std::vector<int>& scanCpus);

// Moves the calling thread off `scanCpus` as placeOpcua says (its CPU mask only; its nice level
// stays). `takt run` calls it on its main thread before it starts any other thread, so every
// thread but the scan, task and watchdog threads (which set their own masks) inherits the mask:
// a thread of the control endpoint in a long system call on the scan's CPU delays the scan's
// wake-up on a kernel without full preemption, whatever the scan's priority. "" when there was
// nothing to move, else the line for the log.
[[nodiscard]] std::string moveOffScanCpus(const std::vector<int>& scanCpus);

} // namespace takt::agent
