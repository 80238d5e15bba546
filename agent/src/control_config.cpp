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

bool controlOptionsFromConfig(const engine::RuntimeConfig& config, ControlOptions& out,
                              std::vector<engine::ConfigDiagnostic>& diagnostics) {
    const engine::RuntimeConfig::Control& c = config.control;
    const std::filesystem::path base = config.file.parent_path();
    const std::string file = config.file.string();
    const std::size_t errorsBefore = diagnostics.size();
    const auto refuse = [&](engine::ConfigPosition where, std::string key, std::string message) {
        engine::ConfigDiagnostic d;
        d.file = file;
        d.line = where.line;
        d.column = where.column;
        d.key = std::move(key);
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
    };
    out.endpoint = c.endpoint;
    out.tlsCert = relativeTo(base, c.tlsCert);
    out.tlsKey = relativeTo(base, c.tlsKey);
    out.tlsClientCa = relativeTo(base, c.tlsClientCa);
    out.auditMaxBytes = std::uint64_t{c.auditMaxMib} << 20;
    out.auditKeep = c.auditKeep;
    out.handshakeTimeoutMs = c.handshakeTimeoutMs;
    out.tokens.clear();
    if (!c.authToken.empty()) {
        // An inline token is as guessable as a token file with the same text: same rules.
        if (std::string why = tokenProblem(c.authToken); !why.empty()) {
            refuse(c.authTokenWhere, "runtime.control.auth_token", std::move(why));
        }
        out.tokens.push_back({Role::Admin, c.authToken});
    }
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
        const engine::ControlToken& t = c.tokens[i];
        const std::string entry = fmt::format("runtime.control.tokens[{}]", i);
        ControlToken token;
        if (!parseRole(t.role, token.role)) {
            refuse(t.where, entry + ".role",
                   fmt::format("'{}' is not a role (viewer, operator, engineer, admin)", t.role));
        }
        if (!t.tokenFile.empty()) {
            std::string error;
            if (!readTokenFile(relativeTo(base, t.tokenFile), token.secret, error)) {
                refuse(t.where, entry + ".token_file", std::move(error));
            }
        } else if (std::string why = tokenProblem(t.token); !why.empty()) {
            refuse(t.where, entry + ".token", std::move(why));
        } else {
            token.secret = t.token;
        }
        out.tokens.push_back(std::move(token));
    }
    return diagnostics.size() == errorsBefore;
}

} // namespace takt::agent
