#pragma once
// What `takt run` and `takt bench jitter` share: getting the program to run, durations on the
// command line, and a compact rendering of durations and bytes.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "takt/bytecode/module.h"

namespace takt::cli {

struct RunnableProgram {
    std::shared_ptr<const bytecode::Module> module;
    std::string hash;   // hex SHA-256 of the program.stbc bytes
    std::string origin; // "src/ (N sources)" or the program.stbc path
    // What the program was built from (agent::projectFingerprint of the sources, or the
    // program.stbc's hash): an applied online change is kept over this project only.
    std::string fingerprint;
};

// Compiles the project's src/ when it has one (so `takt run` runs what the sources say), else
// loads program.stbc. False with `error` (diagnostics rendered) and `exitCode`.
bool loadRunnableProgram(const std::filesystem::path& project, RunnableProgram& out, std::string& error, int& exitCode);

// "10s", "250ms", "2m", "1h", "1.5s" or a bare number of seconds; nullopt when malformed.
[[nodiscard]] std::optional<std::int64_t> parseDurationNs(const std::string& text);

// 12.3us, 1.20ms, 3.0s.
[[nodiscard]] std::string formatNs(std::int64_t ns);

} // namespace takt::cli
