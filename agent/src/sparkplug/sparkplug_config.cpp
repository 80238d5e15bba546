// [runtime.sparkplug] -> SparkplugOptions (sparkplug_config.h).
#include "takt/agent/sparkplug_config.h"

#include <unistd.h>

#include <filesystem>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "takt/agent/control.h"
#include "takt/agent/control_config.h"

namespace takt::agent {

bool sparkplugOptionsFromConfig(const engine::RuntimeConfig& config, SparkplugOptions& out,
                                std::vector<engine::ConfigDiagnostic>& diagnostics) {
    const engine::RuntimeConfig::Sparkplug& c = config.sparkplug;
    out = SparkplugOptions{};
    if (!c.enabled) {
        return true;
    }
    const std::filesystem::path base = config.file.parent_path();
    bool refused = false;
    const auto refuse = [&](engine::ConfigPosition where, std::string key, std::string message) {
        engine::ConfigDiagnostic d;
        d.file = config.file.string();
        d.line = where.line;
        d.column = where.column;
        d.key = std::move(key);
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
        refused = true;
    };
    out.enabled = true;
    out.servers = c.servers;
    out.groupId = c.groupId;
    out.edgeNodeId = c.edgeNodeId;
    out.primaryHostId = c.primaryHostId;
    out.expose = c.expose;
    out.deadband = c.deadband;
    out.deadbands = c.deadbands;
    out.username = c.username;
    if (!roleByName(c.commandRole, out.commandRole)) {
        refused = true; // the reader reported it at its key already
    }
    if (!c.passwordFile.empty()) {
        std::string error;
        if (!readTokenFile(relativeTo(base, c.passwordFile), out.password, error, "password file")) {
            refuse(c.passwordWhere, "runtime.sparkplug.password_file", std::move(error));
        }
    }
    for (const auto& [key, given, path] :
         {std::tuple{"ca", &c.tlsCa, &out.tlsCa}, std::tuple{"cert", &c.tlsCert, &out.tlsCert},
          std::tuple{"key", &c.tlsKey, &out.tlsKey}}) {
        *path = relativeTo(base, *given);
        std::error_code ec;
        if (!path->empty() && (!std::filesystem::is_regular_file(*path, ec) || ::access(path->c_str(), R_OK) != 0)) {
            refuse(c.tlsWhere, fmt::format("runtime.sparkplug.tls.{}", key),
                   fmt::format("'{}' is not a readable file", *path));
        }
    }
    return !refused;
}

} // namespace takt::agent
