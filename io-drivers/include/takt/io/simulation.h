#pragma once
// simulation.toml (truST's format): scripted I/O for a `simulated` driver without a plant.
// Couplings carry an output to an input after a delay, optionally through a threshold;
// disturbances set an input, or fault the driver, at a time after the first cycle. The loader
// reports every problem with file, line, column and key; unknown keys and the truST keys takt
// does not implement are warnings.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/config.h"
#include "takt/io/driver.h"

namespace takt::io {

// One %I or %Q address of a script, resolved against the address mode.
struct ScriptAddress {
    std::string text;        // as written
    std::uint32_t byte = 0;  // first byte in its area
    std::uint32_t bytes = 1; // 1 for a bit
    std::uint8_t bit = 0;    // for a bit address
    bool isBit = false;
};

struct Coupling {
    ScriptAddress source; // %Q
    ScriptAddress target; // %I
    std::optional<double> threshold;
    std::uint64_t onTrue = 1; // with a threshold: the target's value when source >= threshold
    std::uint64_t onFalse = 0;
    std::int64_t delayNs = 0;
};

struct Disturbance {
    std::int64_t atNs = 0; // after the first cycle
    bool fault = false;    // kind = "fault": the driver reports `message` as faulted from then on
    ScriptAddress target;  // kind = "set"
    std::uint64_t value = 0;
    std::string message;
};

struct SimulationScript {
    std::filesystem::path file;
    bool enabled = false; // [simulation] enabled; by default on when there is a coupling or disturbance
    std::vector<Coupling> couplings;
    std::vector<Disturbance> disturbances; // sorted by atNs (file order for equal times)
};

struct SimulationResult {
    std::optional<SimulationScript> script; // empty when any error was found
    std::vector<engine::ConfigDiagnostic> diagnostics;
};

[[nodiscard]] SimulationResult loadSimulation(const std::filesystem::path& file, bool byteAddressing);
[[nodiscard]] SimulationResult parseSimulation(std::string_view text, const std::string& file, bool byteAddressing);

} // namespace takt::io
