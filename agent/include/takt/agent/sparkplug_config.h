#pragma once
// [runtime.sparkplug] of runtime.toml (engine::RuntimeConfig::Sparkplug) turned into what the
// Sparkplug B edge node needs: the MQTT password read from its password file (readTokenFile:
// mode 0600 or stricter, not short, not a placeholder), the TLS files found, paths taken from the
// folder of runtime.toml, the command role by name. `takt run` and `takt validate` both call it,
// so validate refuses every file run refuses. The edge node is sparkplug_node.h.
#include <cstdint>
#include <string>
#include <vector>

#include "takt/agent/rpc_method.h"
#include "takt/engine/config.h"

namespace takt::agent {

struct SparkplugOptions {
    bool enabled = false;
    std::vector<engine::RuntimeConfig::Sparkplug::Server> servers; // failover order
    std::string groupId, edgeNodeId, primaryHostId;
    std::vector<std::string> expose; // empty: every variable
    std::string username, password;
    std::string tlsCa, tlsCert, tlsKey; // absolute, or relative to the working directory
    Role commandRole = Role::Engineer;
    double deadband = 0; // absolute, every numeric metric's unless `deadbands` names it
    std::vector<engine::RuntimeConfig::Sparkplug::Deadband> deadbands; // the first matching glob wins
};

// False with one error per refused key appended to `diagnostics` (file, line, column, key): a
// password file missing, readable by others, short or a placeholder; a TLS file that is not a
// readable file. A disabled section is not looked into (true, `out` disabled).
bool sparkplugOptionsFromConfig(const engine::RuntimeConfig& config, SparkplugOptions& out,
                                std::vector<engine::ConfigDiagnostic>& diagnostics);

} // namespace takt::agent
