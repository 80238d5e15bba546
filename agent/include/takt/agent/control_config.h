#pragma once
// [runtime.control] of runtime.toml (engine::RuntimeConfig::Control) turned into ControlOptions:
// token files read and checked with readTokenFile, inline tokens with tokenProblem, roles by name,
// truST's auth_token as one admin token, relative paths taken from the directory of runtime.toml.
// `takt run` and `takt validate` both call it, so validate refuses every token run refuses.
#include <filesystem>
#include <string>
#include <vector>

#include "takt/agent/control.h"
#include "takt/engine/config.h"

namespace takt::agent {

// False with one error per refused key appended to `diagnostics` (file, line, column, key: an
// unknown role, an unreadable or loose token file, a short or placeholder token). The audit log's
// rotation and the TLS handshake timeout come from the config too. An inline auth_token adds a
// warning (move it into a token file); on a Unix socket or loopback endpoint a weak one is only
// that warning, on any other endpoint it is refused like a weak token file. Limits and version keep
// ControlOptions' defaults, and the caller may set them.
// `path` of a runtime.toml key taken from `base`, the folder of runtime.toml; absolute or empty as it is.
[[nodiscard]] std::string relativeTo(const std::filesystem::path& base, const std::string& path);

bool controlOptionsFromConfig(const engine::RuntimeConfig& config, ControlOptions& out,
                              std::vector<engine::ConfigDiagnostic>& diagnostics);

} // namespace takt::agent
