#pragma once
// fleet.toml: the runtimes `takt deploy --fleet` sends a project to, the waves it goes in and what
// it does when a box fails (docs/fleet.md). Every bad input is a coded diagnostic naming file,
// line, column and key, and a file with one error gives no fleet at all: a deploy sends nothing.
//
// parseFleetConfig reads the text only (the fuzz target's entry); loadFleetConfig reads the file,
// parses it and then checks what the text names on disk (token files with readTokenFile, TLS files
// readable), with paths taken from the folder of fleet.toml.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/config.h"

namespace takt::agent {

// The codes of fleet.toml's diagnostics (docs/fleet.md lists them).
inline constexpr const char* kFleetSyntax = "F0001";  // not TOML, or the file cannot be read
inline constexpr const char* kFleetKey = "F0002";     // unknown key, wrong type, out of range
inline constexpr const char* kFleetRuntime = "F0003"; // a [[runtime]] entry: name, endpoint, TLS keys
inline constexpr const char* kFleetWaves = "F0004";   // canary / wave_size / waves
inline constexpr const char* kFleetFile = "F0005";    // a token or TLS file named is not usable

struct FleetRuntime {
    std::string name;
    std::string endpoint;                 // unix:///path | tcp://host:port | tls://host:port
    std::string tokenFile, ca, cert, key; // as written (loadFleetConfig: taken from the file's folder)
    std::string token;                    // loadFleetConfig: read from tokenFile
    int timeoutMs = 10000;
    engine::ConfigPosition where; // the entry's position, for checks made after parsing
    engine::ConfigPosition tokenWhere, tlsWhere;
};

enum class FleetOnFailure : std::uint8_t { Stop, Rollback };

struct FleetConfig {
    std::filesystem::path file;
    std::vector<FleetRuntime> runtimes;          // in file order
    std::vector<std::vector<std::size_t>> waves; // indices into runtimes; every runtime in exactly one
    std::uint32_t settleS = 10;
    FleetOnFailure onFailure = FleetOnFailure::Stop;
};

struct FleetConfigResult {
    std::optional<FleetConfig> config; // set exactly when no diagnostic is an error
    std::vector<engine::ConfigDiagnostic> diagnostics;
};

// The text of a fleet.toml named `file` in diagnostics; nothing on disk is looked at.
[[nodiscard]] FleetConfigResult parseFleetConfig(std::string_view text, const std::string& file);

// Reads and parses `file`, then reads each token file and checks each TLS file.
[[nodiscard]] FleetConfigResult loadFleetConfig(const std::filesystem::path& file);

} // namespace takt::agent
