#pragma once
// `takt bench jitter --load agent` (TARGETS.md "Timing of the live runtime"): the control
// endpoint is served on a Unix socket inside the benchmark and the run alternates unloaded and
// loaded phases (4 clients x 200 requests/s each); the start-lateness histogram is split by
// phase, so both figures come from the same run.
#include <cstdint>
#include <string>

#include "live_runtime.h"

namespace takt::cli {

struct PhaseLateness {
    std::uint64_t cycles = 0;
    std::int64_t p50Ns = 0, p99Ns = 0, p999Ns = 0, maxNs = 0; // upper bucket edges
};

struct AgentLoadResult {
    PhaseLateness unloaded, loaded;
    std::uint64_t requests = 0, errors = 0; // answered requests and error replies (or failures)
    std::string firstError;
};

// Runs `durationNs` on a started loop: four phases, unloaded / loaded / unloaded / loaded. False
// with `error` when the control endpoint cannot be served.
bool runAgentLoad(LiveRuntime& live, std::int64_t durationNs, bool counterProgram, AgentLoadResult& out,
                  std::string& error);

} // namespace takt::cli
