#pragma once
// What the engineer's shell commands (status, vars, watch, write, force, unforce, events) share:
// one connection to the project's control endpoint, replies parsed, and Ctrl-C / SIGTERM noticed
// between requests so a stream ends cleanly.
#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "ctl_support.h"
#include "takt/agent/control_client.h"

namespace takt::cli {

class ShellClient {
public:
    explicit ShellClient(const char* command) : command_(command) {}
    // Connects with the least role `role` needs; kExitOk or the exit code after printing why.
    [[nodiscard]] int connect(const ControlConnectOptions& options, agent::Role role);
    // One call; on success `result` holds the parsed result, else the exit code is returned after
    // printing the error.
    [[nodiscard]] int call(const std::string& method, const std::string& params, rapidjson::Document& result);
    agent::ControlClient& client() { return *client_; }
    [[nodiscard]] const std::string& endpoint() const { return endpoint_; }

private:
    const char* command_;
    std::string endpoint_;
    std::unique_ptr<agent::ControlClient> client_;
};

// Blocks SIGINT and SIGTERM so that stopRequested() can take them between requests.
void takeStopSignals();
// A SIGINT or SIGTERM arrived since takeStopSignals(); waits up to `waitMs` for one.
[[nodiscard]] bool stopRequested(int waitMs = 0);

// A JSON string literal of `s` (for params built on the command line).
[[nodiscard]] std::string jsonQuoted(const std::string& s);
// `v` as compact JSON text.
[[nodiscard]] std::string jsonText(const rapidjson::Value& v);

} // namespace takt::cli
