// Connection options and reply printing of the control clients `takt ctl` and `takt reload`.
#include "ctl_support.h"

#include <cstdio>

#include "commands.h"
#include "takt/agent/control.h"

namespace takt::cli {

void addConnectOptions(CLI::App& cmd, ControlConnectOptions& options) {
    cmd.add_option("--endpoint", options.endpoint, "unix:///PATH, tcp://HOST:PORT or tls://HOST:PORT")->required();
    cmd.add_option("--token-file", options.tokenFile, "File holding the token (mode 0600)");
    cmd.add_option("--ca", options.caFile, "tls://: CA certificate(s) that signed the server certificate (PEM)");
    cmd.add_option("--cert", options.certFile, "tls://: client certificate (PEM)");
    cmd.add_option("--key", options.keyFile, "tls://: client key (PEM)");
    cmd.add_option("--timeout-ms", options.timeoutMs, "Timeout of connect, send and reply (default 10000)");
}

int clientOptions(const char* command, const ControlConnectOptions& in, agent::ControlClientOptions& out) {
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
    return kExitOk;
}

int printReply(const char* command, const std::string& method, const agent::ControlReply& reply) {
    if (!reply.reached) {
        std::fprintf(stderr, "%s: %s\n", command, reply.message.c_str());
        return kExitControlUnreachable;
    }
    if (!reply.ok) {
        std::fprintf(stderr, "%s: %s: %s (code %d)\n%s\n", command, method.c_str(), reply.message.c_str(), reply.code,
                     reply.json.c_str());
        return kExitControlError;
    }
    std::fwrite(reply.json.data(), 1, reply.json.size(), stdout);
    std::fputc('\n', stdout);
    return kExitOk;
}

} // namespace takt::cli
