#pragma once
// A small client of a running runtime's control endpoint (PROTOCOLS.md "Control endpoint"):
// connect over unix://, tcp:// or tls:// (server certificate verified against a CA file, optional
// client certificate), auth.login with a token, then one request at a time and its reply.
// Used by `takt ctl`, `takt reload` and the agent API's runtime.reload.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace takt::agent {

struct ControlClientOptions {
    std::string endpoint;  // unix:///path | tcp://host:port | tls://host:port
    std::string token;     // empty: no auth.login
    std::string caFile;    // tls: CA that signed the server certificate (empty: system CAs)
    std::string certFile;  // tls: client certificate (PEM), for endpoints with client_ca
    std::string keyFile;   // tls: its key (PEM)
    int timeoutMs = 10000; // per connect / send / reply
};

struct ControlReply {
    bool reached = false; // connected and got a reply
    bool ok = false;      // the reply has a result
    std::string json;     // the result value, or the error object
    int code = 0;         // the error code when !ok and reached
    std::string message;  // why not reached, or the error message
};

class ControlClient {
public:
    explicit ControlClient(ControlClientOptions options);
    ~ControlClient();
    ControlClient(const ControlClient&) = delete;
    ControlClient& operator=(const ControlClient&) = delete;

    // Connects (and logs in when a token is set). The reply is not `reached` when the endpoint
    // cannot be reached; it is reached and not ok when auth.login was refused.
    [[nodiscard]] ControlReply connect();
    // One request; `paramsJson` is an object's JSON text (empty: no params). Notifications that
    // arrive before the reply are skipped.
    [[nodiscard]] ControlReply call(std::string_view method, std::string_view paramsJson);
    // The next line from the server (e.g. an event notification after events.subscribe); false
    // on timeout or when the connection closed.
    bool readLine(std::string& line, int timeoutMs);
    // The server closed the connection (readLine's false was not a timeout).
    [[nodiscard]] bool closed() const;
    // The connection's socket (-1 before connect()), to wait for the server's lines with poll()
    // beside other descriptors. readLine(line, 0) until it returns false takes every line that
    // has come, also those TLS had already decrypted, so a readable socket is the only thing left
    // to wait for.
    [[nodiscard]] int pollFd() const;
    // Keep the lines that come while call() waits for its reply (event notifications after
    // events.subscribe) for takeNotifications(), instead of skipping them: a client that acts on
    // events (takt dap) must not lose one to a call.
    void keepNotifications(bool keep);
    [[nodiscard]] std::vector<std::string> takeNotifications();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// connect() + call(): one method on a fresh connection.
[[nodiscard]] ControlReply controlCall(const ControlClientOptions& options, std::string_view method,
                                       std::string_view paramsJson);

// The params of bytecode.reload: {"bytes":"<base64 of program.stbc>"}, with `dry_run` (a preview
// that applies nothing), `expected_hash` (apply only over this program: the one previewed) and
// `idempotency_key` (the same key again is answered with the first answer, nothing applied twice).
[[nodiscard]] std::string bytecodeReloadParams(std::span<const std::uint8_t> program, bool dryRun = false,
                                               std::string_view expectedHash = {},
                                               std::string_view idempotencyKey = {});

} // namespace takt::agent
