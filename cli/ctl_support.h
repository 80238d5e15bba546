#pragma once
// What the control clients share (`takt ctl`, `takt reload`, status, vars, watch, write, force,
// unforce, events): the connection options — by default the endpoint and a token file from the
// project's runtime.toml — and printing a reply.
#include <string>

#include <CLI/CLI.hpp>

#include "takt/agent/control_client.h"
#include "takt/agent/rpc_method.h"

namespace takt::cli {

struct ControlConnectOptions {
    std::string project; // runtime.toml's directory (default: the current directory)
    std::string endpoint;
    std::string tokenFile;
    std::string caFile;
    std::string certFile;
    std::string keyFile;
    int timeoutMs = 10000;
};

// --project, --endpoint, --token-file, --ca, --cert, --key, --timeout-ms.
void addConnectOptions(CLI::App& cmd, ControlConnectOptions& options);
// The endpoint (--endpoint, else [runtime.control] endpoint) and the token (--token-file, else
// the token of runtime.toml with the least role that is at least `role` and can be read); kExitOk,
// or the exit code after printing why.
[[nodiscard]] int clientOptions(const char* command, const ControlConnectOptions& in, agent::ControlClientOptions& out,
                                agent::Role role = agent::Role::Admin);
// The result on stdout (exit 0); an error on stderr (kExitControlError / kExitControlUnreachable).
[[nodiscard]] int printReply(const char* command, const std::string& method, const agent::ControlReply& reply);
// An error reply on stderr with its exit code; kExitOk when the reply has a result.
[[nodiscard]] int replyFailure(const char* command, const std::string& method, const agent::ControlReply& reply);

// Asks `question` on stderr with " [y/N] " and reads the answer from stdin: true for y or yes.
[[nodiscard]] bool confirmOnTerminal(const char* question);

} // namespace takt::cli
