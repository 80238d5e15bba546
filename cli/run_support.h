#pragma once
// What `takt run` and `takt bench jitter` share: getting the program to run, durations on the
// command line, and a compact rendering of durations and bytes.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::cli {

struct RunnableProgram {
    std::shared_ptr<const bytecode::Module> module;
    std::string hash;   // hex SHA-256 of the program.stbc bytes
    std::string origin; // "src/ (N sources)" or the program.stbc path
    // What the program was built from: the source files (display path, path to read) or the
    // program.stbc, and the [build] options. fingerprint() reads the files again.
    std::vector<std::pair<std::string, std::filesystem::path>> inputs;
    std::string buildOptions;
};

// Compiles the project's src/ when it has one (so `takt run` runs what the sources say), else
// loads program.stbc. False with `error` (diagnostics rendered) and `exitCode`.
bool loadRunnableProgram(const std::filesystem::path& project, RunnableProgram& out, std::string& error, int& exitCode);

// The project's fingerprint as its files are now (agent::projectFingerprint): what an applied
// online change is kept over. Empty when a file cannot be read.
[[nodiscard]] std::string fingerprintOf(const RunnableProgram& program);

// "10s", "250ms", "2m", "1h", "1.5s" or a bare number of seconds; nullopt when malformed.
[[nodiscard]] std::optional<std::int64_t> parseDurationNs(const std::string& text);

// 12.3us, 1.20ms, 3.0s.
[[nodiscard]] std::string formatNs(std::int64_t ns);

} // namespace takt::cli
