// [runtime.control] -> ControlOptions.
#include "takt/agent/control_config.h"

#include <filesystem>

#include <fmt/format.h>

namespace takt::agent {

namespace {

// Whether only this host can reach the endpoint: a Unix socket or a loopback address (config.cpp
// already refuses tcp:// on any other host).
bool localEndpoint(const std::string& endpoint) {
    if (endpoint.starts_with("unix://")) {
        return true;
    }
    const std::size_t sep = endpoint.find("://");
    const std::string rest = sep == std::string::npos ? endpoint : endpoint.substr(sep + 3);
    const std::string host = rest.substr(0, rest.rfind(':'));
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
}

} // namespace

std::string relativeTo(const std::filesystem::path& base, const std::string& path) {
    if (path.empty() || std::filesystem::path(path).is_absolute()) {
        return path;
    }
    return (base / path).string();
}

bool controlOptionsFromConfig(const engine::RuntimeConfig& config, ControlOptions& out,
                              std::vector<engine::ConfigDiagnostic>& diagnostics) {
    const engine::RuntimeConfig::Control& c = config.control;
    const std::filesystem::path base = config.file.parent_path();
    const std::string file = config.file.string();
    bool refused = false;
    const auto report = [&](engine::ConfigDiagnostic::Severity severity, engine::ConfigPosition where, std::string key,
                            std::string message) {
        engine::ConfigDiagnostic d;
        d.severity = severity;
        d.file = file;
        d.line = where.line;
        d.column = where.column;
        d.key = std::move(key);
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
        refused = refused || severity == engine::ConfigDiagnostic::Severity::Error;
    };
    const auto refuse = [&](engine::ConfigPosition where, std::string key, std::string message) {
        report(engine::ConfigDiagnostic::Severity::Error, where, std::move(key), std::move(message));
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
        // An inline token is as guessable as a token file with the same text: same rules where
        // other hosts can reach the endpoint. truST projects ship example tokens inline; on a
        // Unix socket or loopback only local users can try it, so there it is a warning and the
        // project starts as truST starts it.
        std::string why = tokenProblem(c.authToken);
        const bool local = localEndpoint(c.endpoint);
        if (!why.empty() && !local) {
            refuse(c.authTokenWhere, "runtime.control.auth_token", std::move(why));
        } else {
            // Say why this endpoint accepts it: a loopback tcp:// is a network endpoint too.
            const std::string accepted =
                why.empty() ? std::string()
                : c.endpoint.starts_with("unix://")
                    ? fmt::format(" and is weak ({}): accepted only because a unix:// socket is reachable from "
                                  "this host alone, refused on an endpoint other hosts can reach",
                                  why)
                    : fmt::format(" and is weak ({}): accepted only because {} listens on loopback, refused on "
                                  "an address other hosts can reach",
                                  why, c.endpoint);
            report(engine::ConfigDiagnostic::Severity::Warning, c.authTokenWhere, "runtime.control.auth_token",
                   fmt::format("the token is written in runtime.toml{}; move it into a token file "
                               "([[runtime.control.tokens]] role = \"admin\", token_file = \"…\", mode 0600) "
                               "and remove auth_token",
                               accepted));
        }
        out.tokens.push_back({Role::Admin, c.authToken});
    }
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
        const engine::ControlToken& t = c.tokens[i];
        const std::string entry = fmt::format("runtime.control.tokens[{}]", i);
        ControlToken token;
        if (!roleByName(t.role, token.role)) {
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
    return !refused;
}

} // namespace takt::agent
