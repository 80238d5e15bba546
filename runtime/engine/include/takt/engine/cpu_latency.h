#pragma once
// A CPU wake-up latency request to the kernel's PM QoS (/dev/cpu_dma_latency), held while the
// scan runs.
//
// An idle CPU sleeps in the deepest C-state whose exit latency the kernel's governor thinks
// affordable; the exit latency then adds itself to every release of a scan thread that slept on
// it (on an idle VM with the haltpoll driver, releases measured 1.6-3.0 ms late at the 99th
// percentile, against 88-213 us with the request held at 0: docs/performance.md). The kernel
// honours the request for as long as the descriptor it was written to stays open, and drops it
// when the process ends, however it ends: no state is left behind.
#include <cstdint>
#include <optional>
#include <string>

#include "takt/engine/config.h"

namespace takt::engine {

// The latency to hold for [runtime.realtime]: its cpu_dma_latency_us; unset, 0 under SCHED_FIFO
// and none otherwise (cyclictest's default for the same reason); nullopt: leave the system's.
[[nodiscard]] std::optional<std::int32_t> heldCpuLatencyUs(const RuntimeConfig::Realtime& rt) noexcept;

class CpuLatencyRequest {
public:
    CpuLatencyRequest() = default;
    CpuLatencyRequest(const CpuLatencyRequest&) = delete;
    CpuLatencyRequest& operator=(const CpuLatencyRequest&) = delete;
    ~CpuLatencyRequest() { release(); }

    // Requests `us` microseconds at most; an empty string when held, else why not (the run goes
    // on without it). A request already held is replaced.
    [[nodiscard]] std::string hold(std::int32_t us, const char* device = kDevice);
    void release() noexcept;
    [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

    static constexpr const char* kDevice = "/dev/cpu_dma_latency";

private:
    int fd_ = -1;
};

} // namespace takt::engine
