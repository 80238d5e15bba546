#pragma once
// What `takt ctl` and `takt reload` share: the connection options and printing a reply.
#include <string>

#include <CLI/CLI.hpp>

#include "takt/agent/control_client.h"

namespace takt::cli {

struct ControlConnectOptions {
    std::string endpoint;
    std::string tokenFile;
    std::string caFile;
    std::string certFile;
    std::string keyFile;
    int timeoutMs = 10000;
};

void addConnectOptions(CLI::App& cmd, ControlConnectOptions& options);
// Reads the token file; kExitOk, or the exit code after printing why.
[[nodiscard]] int clientOptions(const char* command, const ControlConnectOptions& in, agent::ControlClientOptions& out);
// The result on stdout (exit 0); an error on stderr (kExitControlError / kExitControlUnreachable).
[[nodiscard]] int printReply(const char* command, const std::string& method, const agent::ControlReply& reply);

} // namespace takt::cli
