#pragma once
// `takt validate` as a library call, so the CLI and the agent's runtime.validate give the same
// answer: runtime.toml, the project's sources (compiled as `takt build` would, trust-lsp.toml
// libraries included), the project's I/O (io.toml, else the board's, CONFIG.md), each
// registered driver's init() on its params, the drivers' owned byte ranges, the safe state
// and program.stbc (loader + verifier) when present.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/project.h"
#include "takt/engine/config.h"

namespace takt::agent {

struct ValidateRequest {
    std::filesystem::path project; // empty: the current directory
    std::string board;             // --board NAME or a board file path; empty: none
    // What the sources are read through (the Agent API's workspace); null: the disk.
    std::shared_ptr<const compiler::FileAccess> access;
};

struct ValidateReport {
    // Empty when only a board file was checked (`takt validate --board X` outside a project).
    std::optional<std::filesystem::path> project;
    std::optional<std::string> resource;          // [resource] name
    std::optional<std::string> controlEndpoint;   // [runtime.control] endpoint
    std::string ioSource;                         // "io.toml", "board raspberry-pi-4", …; empty: none
    std::vector<std::string> ioDrivers;           // driver names in io order
    std::vector<std::string> uncheckedDrivers;    // named but not built into this takt
    std::optional<std::string> board;             // the board checked, when any
    std::optional<std::filesystem::path> program; // program.stbc when present and valid
    std::string programHash;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    bool sourcesCompiled = false;   // the project's ST compiled without errors
    std::size_t sourceWarnings = 0; // ST warnings, not listed (takt check lists them)

    [[nodiscard]] bool ok() const;
    // Every error is in the ST sources (coded): `takt validate` exits as `takt check` does.
    [[nodiscard]] bool sourceErrorsOnly() const;
};

[[nodiscard]] ValidateReport validateProject(const ValidateRequest& request);

// The --ci document (CONFIG.md): {"version":1,"command":"validate","status","project",
// "resource","control_endpoint","io_driver","io_drivers", … ,"diagnostics":[…]}.
[[nodiscard]] std::string renderValidateJson(const ValidateReport& report);

} // namespace takt::agent
