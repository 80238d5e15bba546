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
#include <chrono>
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
    // Completes pending calls, and returns events ({"type", "ts", ...} objects as JSON text, in
    // order) for events.subscribe sessions. Called on the server thread when completionFd() is
    // readable, right after a call was handed to the target, when the time pollDeadline() named
    // has come, and once a second besides. A target without a completion descriptor is polled
    // every millisecond instead.
    virtual void poll(std::vector<std::string>& events) = 0;
    // A descriptor that becomes readable (an eventfd: reading resets it) when a pending call may
    // be complete or an event happened: the server thread sleeps until then rather than poll
    // (an idle runtime's control thread wakes once a second). -1 when there is none.
    [[nodiscard]] virtual int completionFd() const { return -1; }
    // The latest time poll() must run again though completionFd() stays quiet (a command's
    // deadline, a periodic check), asked after every poll; time_point::max() when only a wake-up
    // can give poll() something to do. A stream of values taken at an interval would name its
    // next interval here, or signal completionFd().
    [[nodiscard]] virtual std::chrono::steady_clock::time_point pollDeadline() const {
        return std::chrono::steady_clock::time_point::max();
    }
    // The variables value subscriptions read (var.subscribe); nullptr: this target has none.
    [[nodiscard]] virtual ValueFeed* valueFeed() { return nullptr; }

    // The session (connection, or in-process caller) a handler runs for, while it runs: a target
    // that keeps what a session set up (the debug.* breakpoints and halted tasks) keys it by this.
    // Set by the session right before the handler is called; 0 outside a call.
    [[nodiscard]] std::uint64_t callerSession() const noexcept { return callerSession_; }
    void setCallerSession(std::uint64_t session) noexcept { callerSession_ = session; }
    // A session ended (its connection closed or died): what it set up goes with it.
    virtual void sessionClosed(std::uint64_t session) { (void)session; }

private:
    std::uint64_t callerSession_ = 0;
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
// False with `error` naming the file (as `what`: an OPC UA user's "password file") and the reason.
bool readTokenFile(const std::string& path, std::string& token, std::string& error,
                   std::string_view what = "token file");

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

    // ---- Calls from inside the process ---------------------------------------------------
    //
    // The web surface, and next the debugger (DAP), the OPC UA server and the Sparkplug node,
    // serve clients of their own and call the runtime's methods for them. They call here, not
    // through a socket of the endpoint, and get a typed answer: no JSON-RPC line is written for
    // them and parsed back, no auth.login is sent as a request, and a surface maps an error to
    // its own protocol (an HTTP status, an OPC UA StatusCode, a DAP error) by its code, never by
    // reading reply text. What a call goes through is what a request line of a control session
    // goes through, in the same code (ControlSession::dispatch): the method table, the role
    // check, the params schema, the rate limit, the audit log. So a surface adds no second
    // dispatcher, and every caller, inside the process or not, is held to the same rules.
    //
    // Threads: call() and authenticate() may be called from any thread; `done` runs on the
    // endpoint's thread, exactly once (with an error when the service stops first), and must
    // only hand the answer over to the surface's own thread: it must not block.

    // Who calls, as the surface knows its client.
    struct Caller {
        // The surface: "web", "dap", "opcua", "sparkplug". The audit log's peer is
        // "<origin>:<peer>", e.g. "web:127.0.0.1:50312".
        std::string origin;
        // The client: one rate-limit budget per origin and peer, as one per connection on the
        // endpoint (a web client's address and port, an OPC UA session id).
        std::string peer;
        // The client's IP address: failed token checks back off per address, shared with the
        // endpoint's TCP peers, so guessing tokens through a surface is slowed as it is there.
        // Empty for a client that is not on a network.
        std::string address;
    };

    // One call. `role` is what the surface established for the client: the role of a token it
    // checked with authenticate(), or the role its configuration grants (the web page on
    // loopback without tokens: viewer); nothing allows only the methods without a role. The
    // method's own auth.login answers as on the endpoint but changes no role: a surface keeps
    // the role it passes here.
    struct Call {
        Caller caller;
        std::optional<Role> role;
        std::string method;
        rapidjson::Document params; // an object; a null document is read as {}
    };
    void call(Call call, std::function<void(MethodAnswer)> done);

    // The role a control token gives a caller, checked as auth.login checks it (the per-address
    // back-off, the token digests compared in constant time, an auth.login line in the audit
    // log), so a surface can refuse a request before reading its body. `answer` is ok with the
    // role, ok without one when the endpoint has no tokens (the token gives nothing), or the
    // refusal (kUnauthorized, kRateLimited).
    struct TokenCheck {
        std::optional<Role> role;
        MethodAnswer answer;
    };
    void authenticate(Caller caller, std::string token, std::function<void(TokenCheck)> done);

    // A login with credentials the surface holds itself (an OPC UA user's name and password):
    // the same per-address back-off as a token check (a caller still waiting is refused with
    // kRateLimited before `match` runs; a failed match counts against its address, shared with
    // the endpoint's TCP peers) and an auth.login line in the audit log naming the caller.
    // `match` runs on the endpoint's thread and answers the role, or none for wrong credentials
    // (refused with kUnauthorized and `refusal`).
    void login(Caller caller, std::function<std::optional<Role>()> match, std::string refusal,
               std::function<void(TokenCheck)> done);

    // A request the surface refused itself, before any call (a Sparkplug NCMD write to an input
    // the program does not own): one audit line as the method table writes one for a call that
    // answered `code`, so the audit log shows every refused write, whichever layer refused it.
    void audit(const Caller& caller, std::optional<Role> role, std::string_view method, int code);

    // A call whose session stays open until closeStream (the web page's /api/events): `call` is
    // served as call() serves it (var.subscribe: the method table, the role the surface
    // established, the params schema, the caller's rate limit, the audit log); its answer goes to
    // `answer`, then every notification of the session (var.changed; `event` after events.subscribe,
    // the OPC UA server's way to learn of state changes and online changes) to `notification` as its
    // method and params object (JSON text), typed as the answer is: no line is written for the
    // surface to parse back. Both run on the endpoint's thread and must only hand over.
    // `backlogged` (called on that thread) says the consumer has not written the last
    // notification yet: value notifications then wait and merge, as for a connection that does
    // not read. Notifications come only after an answer that is ok.
    struct Stream {
        std::function<void(MethodAnswer)> answer;
        std::function<void(std::string_view method, std::string params)> notification;
        std::function<bool()> backlogged;
    };
    [[nodiscard]] std::uint64_t openStream(Call call, Stream stream);
    void closeStream(std::uint64_t id);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace takt::agent
