#pragma once
// io.toml (CONFIG.md "io.toml"): the configured drivers and the safe state. The same shape is
// the `io` section of a board file. Driver params are checked by each driver's init(); this
// loader checks the structure, the driver names and the safe-state entries.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/config.h"
#include "takt/io/driver.h"

namespace takt::io {

// One [[io.safe_state]] entry, resolved against the address mode.
struct SafeValue {
    std::string address;  // "%QX0.0" as written
    ByteRange range;      // the bytes it writes (count 1 for a bit)
    std::uint8_t bit = 0; // for %QX
    bool isBit = false;
    std::uint64_t value = 0; // little-endian bytes of the typed value
};

struct IoConfig {
    std::filesystem::path file; // io.toml or the board file it came from
    std::vector<DriverSpec> drivers;
    std::vector<SafeValue> safeState;
};

struct IoConfigResult {
    std::optional<IoConfig> config;
    std::vector<engine::ConfigDiagnostic> diagnostics;
};

[[nodiscard]] IoConfigResult loadIoConfig(const std::filesystem::path& file, bool byteAddressing);
[[nodiscard]] IoConfigResult parseIoConfig(std::string_view text, const std::string& file, bool byteAddressing);

// Where the key of a driver's params error is: `keyPath` is the key the error names
// ("io.params.inputs[1].area", as Driver::init() reports it). The line and column of that key in
// the params table; of the nearest enclosing key or entry for a key that is missing; the driver
// entry's (spec.line, spec.column) when the path is not inside the params or the table has no
// source positions (a copy).
struct SourcePoint {
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};
[[nodiscard]] SourcePoint paramKeyLocation(const DriverSpec& spec, std::string_view keyPath);

// The whole %Q area with every safe-state entry applied on zeros: what Driver::applySafeState gets.
[[nodiscard]] std::vector<std::uint8_t> safeOutputImage(const IoConfig& io, std::size_t outputBytes);

} // namespace takt::io
