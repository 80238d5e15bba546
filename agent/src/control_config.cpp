// [runtime.control] -> ControlOptions.
#include "takt/agent/control_config.h"

#include <filesystem>

#include <fmt/format.h>

namespace takt::agent {

namespace {

bool parseRole(const std::string& name, Role& role) {
    for (const Role r : {Role::Viewer, Role::Operator, Role::Engineer, Role::Admin}) {
        if (name == roleName(r)) {
            role = r;
            return true;
        }
    }
    return false;
}

std::string relativeTo(const std::filesystem::path& base, const std::string& path) {
    if (path.empty() || std::filesystem::path(path).is_absolute()) {
        return path;
    }
    return (base / path).string();
}

} // namespace

bool controlOptionsFromConfig(const engine::RuntimeConfig& config, ControlOptions& out, std::string& error) {
    const engine::RuntimeConfig::Control& c = config.control;
    const std::filesystem::path base = config.file.parent_path();
    out.endpoint = c.endpoint;
    out.tlsCert = relativeTo(base, c.tlsCert);
    out.tlsKey = relativeTo(base, c.tlsKey);
    out.tlsClientCa = relativeTo(base, c.tlsClientCa);
    out.auditMaxBytes = std::uint64_t{c.auditMaxMib} << 20;
    out.auditKeep = c.auditKeep;
    out.handshakeTimeoutMs = c.handshakeTimeoutMs;
    out.tokens.clear();
    if (!c.authToken.empty()) {
        out.tokens.push_back({Role::Admin, c.authToken});
    }
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
        const engine::ControlToken& t = c.tokens[i];
        ControlToken token;
        if (!parseRole(t.role, token.role)) {
            error = fmt::format("{}: runtime.control.tokens[{}].role: '{}' is not a role (viewer, operator, "
                                "engineer, admin)",
                                config.file.string(), i, t.role);
            return false;
        }
        if (!t.tokenFile.empty()) {
            if (!readTokenFile(relativeTo(base, t.tokenFile), token.secret, error)) {
                error = fmt::format("{}: runtime.control.tokens[{}].token_file: {}", config.file.string(), i, error);
                return false;
            }
        } else {
            token.secret = t.token;
        }
        out.tokens.push_back(std::move(token));
    }
    return true;
}

} // namespace takt::agent
