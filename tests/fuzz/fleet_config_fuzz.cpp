// libFuzzer target for the fleet.toml reader (agent/src/fleet). Whatever the bytes: no crash, no
// exception, and the result is consistent: a fleet exactly when no diagnostic is an error, every
// diagnostic coded and rendered, and a fleet's waves hold every runtime exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "takt/agent/fleet_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const takt::agent::FleetConfigResult r = takt::agent::parseFleetConfig(text, "fleet.toml");
    bool error = false;
    for (const takt::engine::ConfigDiagnostic& d : r.diagnostics) {
        error = error || d.severity == takt::engine::ConfigDiagnostic::Severity::Error;
        if (d.code.empty() || takt::engine::formatDiagnostic(d).empty()) {
            std::abort();
        }
    }
    if (error == r.config.has_value()) {
        std::abort();
    }
    if (r.config) {
        std::vector<int> seen(r.config->runtimes.size(), 0);
        for (const std::vector<std::size_t>& wave : r.config->waves) {
            if (wave.empty()) {
                std::abort();
            }
            for (std::size_t i : wave) {
                if (i >= seen.size() || seen[i]++ != 0) {
                    std::abort();
                }
            }
        }
        for (int n : seen) {
            if (n != 1) {
                std::abort();
            }
        }
    }
    return 0;
}
