#pragma once
// Runs a simulation.toml script for the `simulated` driver without a plant, with truST's
// timing: after a cycle each coupling reads its output and, when the value it derives changed,
// schedules it for its input `delay_ms` later; before a cycle the disturbances that are due
// fire, then the scheduled values that are due are written (a delay of 0 reaches the inputs of
// the next cycle). Times count from the first cycle. Every buffer is sized in configure(): the
// cycle calls never allocate.
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "takt/io/driver.h"
#include "takt/io/simulation.h"

namespace takt::io::detail {

class ScriptRunner {
public:
    // Values a coupling may have in flight (a source toggling faster than its delay); when full
    // the oldest is written early so the newest is never lost.
    static constexpr std::size_t kMaxInFlight = 64;

    void configure(const SimulationScript& script);

    // The input bytes the script writes and the output bytes it reads.
    [[nodiscard]] std::vector<ByteRange> ranges() const;
    // The %Q bytes the couplings read (the driver's output latch size).
    [[nodiscard]] std::size_t outputBytes() const noexcept { return outputBytes_; }

    void beforeCycle(std::int64_t nowNs, std::span<std::uint8_t> inputs) noexcept;
    void afterCycle(std::int64_t nowNs, std::span<const std::uint8_t> outputs) noexcept;

    // Any thread: faulted with the message of the last fault disturbance that fired.
    [[nodiscard]] HealthStatus health() const;

private:
    struct InFlight {
        std::int64_t dueNs = 0;
        std::uint64_t sequence = 0;
        std::uint64_t value = 0;
    };
    struct Lane { // one coupling's state
        std::size_t head = 0, count = 0;
        std::uint64_t last = 0;
        bool hasLast = false;
    };

    void write(const ScriptAddress& a, std::uint64_t value) noexcept;
    void pop(std::size_t lane) noexcept; // writes the lane's oldest value

    SimulationScript script_;
    std::vector<std::uint8_t> held_;   // the input bytes as the script last set them
    std::vector<std::uint32_t> owned_; // the byte offsets of held_ it writes
    std::vector<Lane> lanes_;
    std::vector<InFlight> ring_; // kMaxInFlight per lane
    std::size_t outputBytes_ = 0;
    std::size_t nextDisturbance_ = 0;
    std::uint64_t sequence_ = 0;
    std::int64_t originNs_ = 0;
    bool started_ = false;
    std::atomic<int> fault_{-1}; // index into script_.disturbances
};

} // namespace takt::io::detail
