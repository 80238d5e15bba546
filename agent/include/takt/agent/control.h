#pragma once
// The control endpoint of a running runtime (PROTOCOLS.md "Control endpoint"): JSON-RPC 2.0, one
// message per line, over a Unix socket, loopback TCP or TLS, served by Asio on one low-priority
// thread. The server owns everything about connections — framing and size/depth caps, sessions,
// auth.login and roles, back-off, connection cap, idle timeout, rate limit, the audit log, event
// subscriptions — and hands authorised method calls to a ControlTarget, which owns what the
// methods mean (the live runtime: control_runtime.h).
//
// Threads: every ControlTarget call, every reply callback and every event comes on the server's
// thread, so a target needs no locking of its own; it talks to the scan thread only through the
// scan loop's command queue and snapshots.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "takt/agent/rpc_method.h"

namespace takt::agent {

// Control-endpoint error codes beyond seed 000's (PROTOCOLS.md).
inline constexpr int kRateLimited = -32005;
inline constexpr int kUnauthorized = -32010;
inline constexpr int kForbidden = -32011;

using ControlAnswer = MethodAnswer;
using ControlReplyFn = ReplyFn;

class ControlTarget;
class ValueFeed; // value_feed.h
// A method of a ControlTarget. The handler gets the target that listed it (its own object) and
// the method's name, and may answer at once or later; either way `reply` is invoked exactly once,
// on the server thread. The server checks the role and the params (against paramsSchema) before.
using ControlHandler = void (*)(ControlTarget& target, std::string_view method, const rapidjson::Value& params,
                                ControlReplyFn reply);
using ControlMethod = MethodSpec<ControlHandler>;

// What the methods act on.
class ControlTarget {
public:
    virtual ~ControlTarget() = default;
    // The methods this target serves (the server rejects the rest with -32601). The table must
    // outlive the server.
    [[nodiscard]] virtual std::span<const ControlMethod> methods() const = 0;
    // Called on the server thread about every millisecond, and at once when completionFd() is
    // readable: completes pending calls, and returns events ({"type", "ts", ...} objects as JSON
    // text, in order) for events.subscribe sessions.
    virtual void poll(std::vector<std::string>& events) = 0;
    // A descriptor that becomes readable (an eventfd: reading resets it) when a pending call may
    // be complete, so its answer does not wait for the next poll; -1 when there is none.
    [[nodiscard]] virtual int completionFd() const { return -1; }
    // The variables value subscriptions read (var.subscribe); nullptr: this target has none.
    [[nodiscard]] virtual ValueFeed* valueFeed() { return nullptr; }
};

struct ControlToken {
    Role role = Role::Viewer;
    std::string secret; // the token bytes (read from token_file, or the truST auth_token)
};

struct ControlOptions {
    std::string endpoint; // unix:///path | tcp://host:port | tls://host:port
    std::vector<ControlToken> tokens;
    std::string tlsCert, tlsKey, tlsClientCa; // PEM files (tls:// only); client_ca: require client certificates
    std::string auditLog;                     // file appended to, one line per request; empty: none
    std::uint64_t auditMaxBytes = std::uint64_t{8} << 20; // rotated before it grows past this
    std::uint32_t auditKeep = 4;                          // rotated files kept: audit.log.1 .. .N
    std::uint32_t maxConnections = 8;
    std::uint32_t idleTimeoutMs = 30'000;
    // A TLS client must finish its handshake within this; until then it holds a descriptor and a
    // place under maxConnections without having said anything.
    std::uint32_t handshakeTimeoutMs = 5'000;
    std::uint32_t maxRequestsPerSecond = 200;
    std::string version; // reported by agent.ping / agent.describe
};

// Why `token` cannot be a control token, or empty: shorter than 16 bytes, not printable ASCII,
// one character repeated, or a placeholder word ("changeme", "<token>", ...). Inline tokens of
// runtime.toml and token files get this same check.
[[nodiscard]] std::string tokenProblem(std::string_view token);

// Reads a token file: mode 0600 or stricter, one trailing newline trimmed, then tokenProblem().
// False with `error` naming the file and the reason.
bool readTokenFile(const std::string& path, std::string& token, std::string& error);

class ControlServer {
public:
    ControlServer(ControlOptions options, ControlTarget& target);
    ~ControlServer(); // stops
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Checks the options (a non-loopback endpoint needs TLS and a token; TCP and TLS need
    // tokens), binds, and starts the server thread at low priority. False with `error` when the
    // endpoint cannot be served; nothing is left listening then.
    bool start(std::string& error);
    void stop();

    // The bound endpoint (tcp://127.0.0.1:PORT with the real port when 0 was asked for); empty for
    // a server without an endpoint (options.endpoint empty: it serves local calls only).
    [[nodiscard]] std::string boundEndpoint() const;

    // A call from another surface of the runtime (the web server), served as a session of the
    // endpoint would serve it: on the endpoint's thread, through the same method table, login,
    // roles, params check and audit log. `token` (when not empty) is logged in first; without it
    // the call has `grantedRole` (or none). `done` gets the JSON-RPC response line, on the
    // endpoint's thread; a failed login answers with the login's error instead.
    struct LocalCall {
        std::string peer; // for the audit log, e.g. "web:127.0.0.1:50312"
        // The client's IP address: failed logins back off per address, shared with the control
        // endpoint's TCP peers, so guessing tokens over HTTP is slowed as it is there.
        std::string address;
        std::string token; // a control token, or empty
        std::optional<Role> grantedRole;
        std::string line; // one JSON-RPC request
    };
    void callLocal(LocalCall call, std::function<void(std::string)> done);

    // A session for another surface that stays open until closeStream (the web page's
    // /api/events): `call` is served as by callLocal, and every line the session sends after —
    // the answer, then its notifications (var.changed) — goes to `line`, on the endpoint's
    // thread. `backlogged` (called on that thread) says the consumer has not written the last
    // line yet: value notifications then wait and merge, as for a connection that does not read.
    struct LocalStream {
        std::function<void(std::string)> line;
        std::function<bool()> backlogged;
    };
    [[nodiscard]] std::uint64_t openStream(LocalCall call, LocalStream stream);
    void closeStream(std::uint64_t id);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace takt::agent
