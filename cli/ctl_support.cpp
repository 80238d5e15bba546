// Connection options and reply printing of the control clients.
#include "ctl_support.h"

#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "takt/agent/control.h"
#include "takt/engine/config.h"

namespace takt::cli {

namespace {

namespace fs = std::filesystem;

int roleRank(std::string_view name) {
    return name == "viewer" ? 0 : name == "operator" ? 1 : name == "engineer" ? 2 : 3;
}

// Endpoint and token from runtime.toml for whatever the command line left open.
int fromProject(const char* command, const ControlConnectOptions& in, agent::ControlClientOptions& out,
                agent::Role role) {
    std::error_code ec;
    const fs::path dir = in.project.empty() ? fs::current_path(ec) : fs::path(in.project);
    const fs::path file = dir / "runtime.toml";
    if (!fs::exists(file, ec)) {
        std::fprintf(stderr, "%s: no --endpoint given and no %s to read it from (use --project DIR or --endpoint)\n",
                     command, file.c_str());
        return kExitInvalidProject;
    }
    const engine::RuntimeConfigResult rc = engine::loadRuntimeConfig(file);
    if (!rc.config) {
        for (const engine::ConfigDiagnostic& d : rc.diagnostics) {
            std::fprintf(stderr, "%s\n", engine::formatDiagnostic(d).c_str());
        }
        return kExitInvalidProject;
    }
    const engine::RuntimeConfig::Control& c = rc.config->control;
    if (out.endpoint.empty()) {
        if (c.endpoint.empty()) {
            std::fprintf(stderr,
                         "%s: %s has no [runtime.control] endpoint; add one (and restart takt run) or give "
                         "--endpoint\n",
                         command, file.c_str());
            return kExitInvalidProject;
        }
        out.endpoint = c.endpoint;
    }
    if (!out.token.empty() || !in.tokenFile.empty()) {
        return kExitOk;
    }
    // The least role that suffices: watching must not need an engineer's token when a viewer's is
    // there. When none suffices, the highest there is (the endpoint then says what is missing).
    const int wanted = static_cast<int>(role);
    const auto better = [wanted](int rank, int than) {
        if (than < 0) {
            return true;
        }
        if ((rank >= wanted) != (than >= wanted)) {
            return rank >= wanted;
        }
        return rank >= wanted ? rank < than : rank > than;
    };
    int chosen = -1;
    for (const engine::ControlToken& t : c.tokens) {
        const int rank = roleRank(t.role);
        if (!better(rank, chosen)) {
            continue;
        }
        std::string token = t.token;
        std::string error;
        if (!t.tokenFile.empty()) {
            const fs::path path = fs::path(t.tokenFile).is_absolute() ? fs::path(t.tokenFile) : dir / t.tokenFile;
            if (!agent::readTokenFile(path.string(), token, error)) {
                continue; // another role's file may be readable
            }
        }
        if (!token.empty()) {
            out.token = token;
            chosen = rank;
        }
    }
    if (out.token.empty() && !c.authToken.empty()) {
        out.token = c.authToken;
    }
    return kExitOk;
}

} // namespace

void addConnectOptions(CLI::App& cmd, ControlConnectOptions& options) {
    cmd.add_option("--project", options.project,
                   "Project whose runtime.toml names the endpoint and token files (default: the current directory)");
    cmd.add_option("--endpoint", options.endpoint,
                   "unix:///PATH, tcp://HOST:PORT or tls://HOST:PORT (default: [runtime.control] endpoint)");
    cmd.add_option("--token-file", options.tokenFile,
                   "File holding the token, mode 0600 (default: a readable token file of runtime.toml)");
    cmd.add_option("--ca", options.caFile, "tls://: CA certificate(s) that signed the server certificate (PEM)");
    cmd.add_option("--cert", options.certFile, "tls://: client certificate (PEM)");
    cmd.add_option("--key", options.keyFile, "tls://: client key (PEM)");
    cmd.add_option("--timeout-ms", options.timeoutMs, "Timeout of connect, send and reply (default 10000)");
}

int clientOptions(const char* command, const ControlConnectOptions& in, agent::ControlClientOptions& out,
                  agent::Role role) {
    out.endpoint = in.endpoint;
    out.caFile = in.caFile;
    out.certFile = in.certFile;
    out.keyFile = in.keyFile;
    out.timeoutMs = in.timeoutMs > 0 ? in.timeoutMs : 10000;
    if (in.certFile.empty() != in.keyFile.empty()) {
        std::fprintf(stderr, "%s: --cert and --key go together\n", command);
        return kExitInvalidProject;
    }
    if (!in.tokenFile.empty()) {
        std::string error;
        if (!agent::readTokenFile(in.tokenFile, out.token, error)) {
            std::fprintf(stderr, "%s: %s\n", command, error.c_str());
            return kExitInvalidProject;
        }
    }
    // The project fills in what the command line left open; an --endpoint alone (no --project)
    // connects without auth.login unless --token-file is given.
    if (out.endpoint.empty() || (!in.project.empty() && in.tokenFile.empty())) {
        return fromProject(command, in, out, role);
    }
    return kExitOk;
}

int replyFailure(const char* command, const std::string& method, const agent::ControlReply& reply) {
    if (!reply.reached) {
        std::fprintf(stderr, "%s: %s\n", command, reply.message.c_str());
        return kExitControlUnreachable;
    }
    if (!reply.ok) {
        std::fprintf(stderr, "%s: %s: %s (code %d)\n%s\n", command, method.c_str(), reply.message.c_str(), reply.code,
                     reply.json.c_str());
        return kExitControlError;
    }
    return kExitOk;
}

bool confirmOnTerminal(const char* question) {
    std::fprintf(stderr, "%s [y/N] ", question);
    std::fflush(stderr);
    char line[16] = {};
    if (std::fgets(line, sizeof line, stdin) == nullptr) {
        return false;
    }
    const std::string answer(line);
    return answer == "y\n" || answer == "Y\n" || answer == "yes\n" || answer == "YES\n" || answer == "Yes\n";
}

int printReply(const char* command, const std::string& method, const agent::ControlReply& reply) {
    if (const int rc = replyFailure(command, method, reply); rc != kExitOk) {
        return rc;
    }
    std::fwrite(reply.json.data(), 1, reply.json.size(), stdout);
    std::fputc('\n', stdout);
    return kExitOk;
}

} // namespace takt::cli
