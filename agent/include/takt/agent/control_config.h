#pragma once
// [runtime.control] of runtime.toml (engine::RuntimeConfig::Control) turned into ControlOptions:
// token files read and checked with readTokenFile, roles by name, truST's auth_token as one admin
// token, relative paths taken from the directory of runtime.toml.
#include <string>

#include "takt/agent/control.h"
#include "takt/engine/config.h"

namespace takt::agent {

// False with `error` naming the key and the reason (an unknown role, a refused token file).
// Limits, audit log and version keep ControlOptions' defaults; the caller may set them.
bool controlOptionsFromConfig(const engine::RuntimeConfig& config, ControlOptions& out, std::string& error);

} // namespace takt::agent
