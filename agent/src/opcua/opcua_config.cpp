// [runtime.opcua] -> OpcuaOptions (opcua_config.h).
#include "takt/agent/opcua_config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "takt/agent/control.h"
#include "takt/agent/control_config.h"
#include "takt/engine/config_reader.h"

namespace takt::agent {

namespace {

// Debian 12's nodejs. Older ones lack what node-opcua needs (the Web Crypto API, which server.js
// makes global on 18, and ES2022); the server would die at every start and be restarted for ever.
constexpr int kMinNodeMajor = 18;

// The major version `node --version` prints ("v20.11.1" -> 20), nothing when it prints none within
// 5 s. Nothing of takt's is handed to it: no descriptor beyond the pipe, no input.
std::optional<int> nodeMajorVersion(const std::string& node) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        return std::nullopt;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::string program = node;
    std::string flag = "--version";
    char* argv[] = {program.data(), flag.data(), nullptr};
    char* envp[] = {nullptr};
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, node.c_str(), &actions, nullptr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    std::string text;
    if (rc == 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        char buf[64];
        while (text.size() < 64) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{out[0], POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
                break;
            }
            const ssize_t n = ::read(out[0], buf, sizeof buf);
            if (n <= 0) {
                break;
            }
            text.append(buf, static_cast<std::size_t>(n));
        }
        (void)::kill(pid, SIGKILL); // done or hung: it has said what it will say
        int status = 0;
        (void)::waitpid(pid, &status, 0);
    }
    ::close(out[0]);
    if (text.size() < 2 || text[0] != 'v') {
        return std::nullopt;
    }
    int major = 0;
    const auto [end, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), major);
    if (ec != std::errc() || end == text.data() + 1) {
        return std::nullopt;
    }
    return major;
}

} // namespace

std::string findExecutable(std::initializer_list<std::string_view> names, std::string_view searchPath) {
    for (std::string_view name : names) {
        std::size_t start = 0;
        while (start <= searchPath.size()) {
            const std::size_t end = std::min(searchPath.find(':', start), searchPath.size());
            // An empty entry is the current directory in PATH's syntax; a server started by takt
            // never takes its interpreter from there.
            if (end > start) {
                const std::filesystem::path candidate =
                    std::filesystem::path(searchPath.substr(start, end - start)) / name;
                std::error_code ec;
                if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
                    return candidate.string();
                }
            }
            start = end + 1;
        }
    }
    return {};
}

bool opcuaOptionsFromConfig(const engine::RuntimeConfig& config, OpcuaOptions& out,
                            std::vector<engine::ConfigDiagnostic>& diagnostics,
                            std::optional<std::string_view> searchPath) {
    const engine::RuntimeConfig::Opcua& c = config.opcua;
    out = OpcuaOptions{};
    if (!c.enabled) {
        return true;
    }
    const std::filesystem::path base = config.file.parent_path();
    bool refused = false;
    const auto report = [&](engine::ConfigDiagnostic::Severity severity, engine::ConfigPosition where, std::string key,
                            std::string message) {
        engine::ConfigDiagnostic d;
        d.severity = severity;
        d.file = config.file.string();
        d.line = where.line;
        d.column = where.column;
        d.key = std::move(key);
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
        refused = refused || severity == engine::ConfigDiagnostic::Severity::Error;
    };
    const char* envPath = std::getenv("PATH");
    out.node = findExecutable({"node", "nodejs"}, searchPath.value_or(envPath != nullptr ? envPath : ""));
    if (out.node.empty()) {
        report(engine::ConfigDiagnostic::Severity::Error, c.where, "runtime.opcua.enabled",
               "the OPC UA server runs on Node.js, and there is no node (or nodejs) on PATH: install it (Debian: "
               "apt install nodejs), or set enabled = false");
    } else if (const std::optional<int> major = nodeMajorVersion(out.node); !major || *major < kMinNodeMajor) {
        report(engine::ConfigDiagnostic::Severity::Error, c.where, "runtime.opcua.enabled",
               fmt::format("the OPC UA server needs Node.js {} or later, and {} is {}: install Node.js {} or later "
                           "(Debian: apt install nodejs), or set enabled = false",
                           kMinNodeMajor, out.node,
                           major ? fmt::format("version {}", *major) : std::string("of no version `--version` names"),
                           kMinNodeMajor));
    }
    out.enabled = true;
    out.host = c.host;
    out.port = c.port;
    out.endpointPath = c.endpointPath;
    out.namespaceUri = c.namespaceUri.empty() ? fmt::format("urn:takt:{}", config.resourceName) : c.namespaceUri;
    out.publishIntervalMs = c.publishIntervalMs;
    out.maxNodes = c.maxNodes;
    out.expose = c.expose;
    out.securityPolicy = c.securityPolicy;
    out.securityMode = c.securityMode;
    out.allowAnonymous = c.allowAnonymous;
    out.certificate = relativeTo(base, c.certificate);
    out.privateKey = relativeTo(base, c.privateKey);
    out.pkiDir = relativeTo(base, c.pkiDir);
    const bool local = engine::isLoopbackHost(c.host);
    for (const engine::OpcuaUser& u : c.users) {
        OpcuaUserOptions user;
        user.name = u.name;
        if (!roleByName(u.role, user.role)) {
            refused = true; // the reader reported it at its key already
        }
        if (!u.passwordFile.empty()) {
            std::string error;
            if (!readTokenFile(relativeTo(base, u.passwordFile), user.password, error, "password file")) {
                report(engine::ConfigDiagnostic::Severity::Error, u.where, u.key, std::move(error));
            }
        } else {
            // truST's inline password: as an inline control token (control_config.cpp).
            std::string why = tokenProblem(u.password);
            if (!why.empty() && !local) {
                report(engine::ConfigDiagnostic::Severity::Error, u.where, u.key,
                       fmt::format("{}; {} is reachable from other hosts", why, c.listen));
            } else {
                report(engine::ConfigDiagnostic::Severity::Warning, u.where, u.key,
                       fmt::format("the password is written in runtime.toml{}; move it into a password file "
                                   "([[runtime.opcua.users]] name, role, password_file = \"…\", mode 0600) and "
                                   "remove username and password",
                                   why.empty() ? std::string()
                                               : fmt::format(" and is weak ({}): accepted only because {} is a "
                                                             "loopback address",
                                                             why, c.listen)));
            }
            user.password = u.password;
        }
        out.users.push_back(std::move(user));
    }
    return !refused;
}

} // namespace takt::agent
