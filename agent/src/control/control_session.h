#pragma once
// One control-endpoint session without its socket: lines (rpc_framer.h) and the JSON-RPC envelope
// (rpc_envelope.h) as every surface has them, the endpoint's method table, auth.login and roles, the rate limit, the
// server's own methods, event subscriptions and the hand-off to the ControlTarget. The Asio server (control_server.cpp)
// feeds it the bytes a connection receives and writes out the lines it produces; the fuzz target drives it the same way
// without any socket.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "control/control_audit.h"
#include "control/control_auth.h"
#include "control/value_subscription.h"
#include "rpc/method_table.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"
#include "takt/agent/control.h"

namespace takt::agent::detail {

// PROTOCOLS.md event types, in the order of the subscription bit mask.
inline constexpr std::string_view kEventTypes[] = {
    "runtime_started", "runtime_stopped", "paused",          "resumed",       "cycle_overrun",
    "fault",           "reload_applied",  "reload_rejected", "driver_health", "retain_saved",
    "retain_failed",   "debug_stopped",   "debug_output"};
[[nodiscard]] int eventTypeIndex(std::string_view name) noexcept;

class ControlSession;

// The recent events with a sequence number each, for a client that asks instead of subscribing
// (events.recent: the web page polls it). Bounded: a client that never asks costs nothing more.
class EventLog {
public:
    static constexpr std::size_t kEvents = 256; // every type but cycle_overrun
    // cycle_overrun events have a list of their own: however many a busy machine has, they
    // cannot push faults and state changes out of the recent events.
    static constexpr std::size_t kOverruns = 32;
    // reload_applied / reload_rejected, kept apart so that a burst of overruns cannot push the
    // online-change history out.
    static constexpr std::size_t kReloads = 32;
    struct Entry {
        std::uint64_t seq = 0;
        std::string json; // the event object with "seq" first
    };
    void add(std::string_view type, const std::string& eventJson);
    // {"next", "events" (seq > since), "reloads"}.
    [[nodiscard]] std::string since(std::uint64_t seq) const;

private:
    std::deque<Entry> events_;
    std::deque<Entry> overruns_;
    std::deque<Entry> reloads_;
    std::uint64_t next_ = 1;
};

// What the sessions of one endpoint share: options, tokens, back-off, the method table, the
// audit log.
class ControlService {
public:
    ControlService(ControlOptions options, ControlTarget& target, std::string transport);
    ~ControlService();
    ControlService(const ControlService&) = delete;
    ControlService& operator=(const ControlService&) = delete;

    // Opens the audit log (when configured). False with `error` naming the file.
    bool openAudit(std::string& error);
    // Re-reads target.methods(); called once before serving.
    void loadMethods();

    [[nodiscard]] bool loginRequired() const { return !tokens_.empty(); }
    [[nodiscard]] const ControlOptions& options() const { return options_; }
    [[nodiscard]] ControlTarget& target() { return target_; }

    // How a method of the endpoint's table is served: by the session itself, or by the target.
    struct Route {
        ControlAnswer (ControlSession::*builtin)(const rapidjson::Value& params) = nullptr;
        ControlHandler target = nullptr;
    };
    using Method = agent::MethodSpec<Route>;
    // The endpoint's one method table: the session's methods, then the target's.
    [[nodiscard]] std::span<const Method> methods() const { return methods_; }

    // A token checked as auth.login checks it: the peer's back-off first, then the token set in
    // constant time; a wrong token counts against the peer (`peerKey`, PeerInfo::key). The
    // result is the role (`answer` ok), or the refusal (kRateLimited, kUnauthorized).
    struct TokenCheck {
        std::optional<Role> role;
        ControlAnswer answer;
    };
    [[nodiscard]] TokenCheck checkToken(const std::string& peerKey, std::string_view token);
    // The same for credentials a surface checks itself (an OPC UA user's password): the peer's
    // back-off first (a peer still waiting is refused without `match` being run), then `match`;
    // no role counts against the peer, and is refused with `refusal`.
    [[nodiscard]] TokenCheck checkLogin(const std::string& peerKey, const std::function<std::optional<Role>()>& match,
                                        std::string_view refusal);

    // The rate-limit budget of an in-process caller (`key`: origin and peer), kept while it is
    // used; budgets idle for a while are full again and are forgotten (bounded).
    RateLimiter& callerLimiter(const std::string& key);

    // One audit line: ISO time, peer, role, method, ok or the error code. Never params or tokens.
    // Rejections repeated within a second are summed up (control_audit.h). With `item`, the line
    // of one of the things the call acted on (var.writeMany: a variable's path, `name=`).
    void audit(std::string_view peer, std::optional<Role> role, std::string_view method, int code,
               std::string_view item = {});

    // Called when a session subscribed to values: the server samples them from now on.
    std::function<void()> valuesWanted;

    // Polls the target; each event becomes a notification line for the sessions subscribed to
    // its type (`deliver(typeIndex, params, line)`: the event object, and the line that carries it).
    template <class Deliver> void pollEvents(Deliver&& deliver) {
        audit_.flush(Clock::now());
        events_.clear();
        target_.poll(events_);
        for (const std::string& e : events_) {
            int type = -1;
            std::string json;
            std::string line;
            if (eventLine(e, type, json, line)) {
                deliver(type, json, line);
            }
        }
    }

private:
    friend class ControlSession;
    bool eventLine(const std::string& event, int& type, std::string& json, std::string& line);

    ControlOptions options_;
    ControlTarget& target_;
    std::string transport_;
    TokenSet tokens_;
    LoginBackoff backoff_;
    struct CallerBudget {
        RateLimiter limiter;
        Clock::time_point used;
    };
    std::unordered_map<std::string, CallerBudget> callerLimits_;
    std::vector<Method> methods_;
    rpc::ParamsSchemas schemas_;
    std::vector<std::string> events_;
    EventLog eventLog_;
    rpc::ParsedLine eventParse_;
    AuditLog audit_;
    Clock::time_point started_ = Clock::now();
};

struct PeerInfo {
    std::string label;        // for the audit log: "tcp:127.0.0.1:50122", "unix:uid=1000,pid=42"
    std::string key;          // for the back-off: "ip:192.0.2.7", "ip:loopback", "uid:1000"
    bool trustedUnix = false; // a Unix peer of an endpoint without tokens: admin
    // A role held without auth.login (a web page on loopback with auth = "local": viewer); a login
    // replaces it.
    std::optional<Role> grantedRole;
};

// Where a session's output goes.
class SessionSink {
public:
    virtual ~SessionSink() = default;
    SessionSink() = default;
    SessionSink(const SessionSink&) = delete;
    SessionSink& operator=(const SessionSink&) = delete;
    // One JSON line, without its newline.
    virtual void sendLine(std::string line) = 0;
    // One notification (`params`: its params object as JSON text). A socket's sink writes it as
    // a JSON-RPC notification line (the default); an in-process consumer takes it typed.
    virtual void sendNotification(std::string_view method, std::string params);
    // The client has not taken what was sent yet: value notifications wait (latest wins).
    [[nodiscard]] virtual bool backlogged() const { return false; }
};

class ControlSession {
public:
    // `limiter`: a rate-limit budget the session shares with others of the same client (an
    // in-process caller's calls); null: the session's own, as for a connection.
    ControlSession(ControlService& service, PeerInfo peer, SessionSink& sink, RateLimiter* limiter = nullptr);
    ~ControlSession();
    ControlSession(const ControlSession&) = delete;
    ControlSession& operator=(const ControlSession&) = delete;

    // The methods the session answers itself (auth, ping, describe, schema, events).
    [[nodiscard]] static std::span<const ControlService::Method> builtins();

    // Bytes received: complete lines are handled in order; a line longer than lineLimit() gets
    // one -32600 as soon as it crosses the cap and is skipped up to its newline (never buffered).
    void feed(std::string_view bytes);
    // End of input: a last line without newline is handled.
    void finish();
    // One complete line (without its newline): the envelope, then dispatch().
    void handleLine(std::string_view line);

    // One request whose envelope was read (by handleLine, or typed by an in-process caller,
    // ControlServer::call): the rate limit, an envelope-level params error (`paramsError`, or
    // null), the method table, the role, the params schema, then the session's own method or the
    // target's. Every outcome is audited and handed to `answered` exactly once, at once or later
    // on the server thread; a target's answer that comes after the session is gone is dropped.
    using Answered = std::function<void(const ControlAnswer&)>;
    void dispatch(std::string_view method, const rapidjson::Value& params, const rpc::Error* paramsError,
                  Answered answered);
    // dispatch() for a typed call from inside the process (ControlServer::call, openStream):
    // null params are read as {}, params that are not an object are refused as the envelope
    // refuses them.
    void dispatchCall(std::string_view method, rapidjson::Document& params, Answered answered);

    // Logged in, or (without tokens) has made a request: not evicted for a newcomer.
    [[nodiscard]] bool proven() const { return proven_; }
    // Calls the target has not answered yet.
    [[nodiscard]] std::uint32_t pending() const { return pending_; }
    [[nodiscard]] bool subscribed(int type) const { return type >= 0 && (subscriptions_ & (1U << type)) != 0; }
    [[nodiscard]] const PeerInfo& peer() const { return peer_; }
    // A round of value sampling (ValueSubscriptions::sample) after the feed's refresh(): when
    // this session's next subscription is due, or nothing.
    std::optional<Clock::time_point> sampleValues(Clock::time_point now, std::size_t& budget);
    [[nodiscard]] bool subscribedToValues() const { return values_ != nullptr && !values_->empty(); }

private:
    void reply(const rpc::RequestId& id, const ControlAnswer& answer);
    void finish(std::string_view method, const ControlAnswer& answer, const Answered& answered);
    void refuseOversize();
    // The longest request line the session takes now: kMaxEngineerLineBytes with the engineer
    // role or above (a bytecode.reload of a large program), kMaxLineBytes otherwise.
    [[nodiscard]] std::size_t lineLimit() const noexcept;
    ControlAnswer ping(const rapidjson::Value& params);
    ControlAnswer login(const rapidjson::Value& params);
    void forgetLogin();
    ControlAnswer subscribe(const rapidjson::Value& params);
    ControlAnswer recentEvents(const rapidjson::Value& params);
    ControlAnswer subscribeValues(const rapidjson::Value& params);
    ControlAnswer unsubscribeValues(const rapidjson::Value& params);
    ControlAnswer describe(const rapidjson::Value& params);
    ControlAnswer schema(const rapidjson::Value& params);

    ControlService& service_;
    PeerInfo peer_;
    SessionSink& sink_;
    std::optional<Role> role_;
    bool proven_ = false;
    std::uint32_t pending_ = 0;
    std::uint32_t subscriptions_ = 0;
    std::unique_ptr<ValueSubscriptions> values_;
    RateLimiter ownLimiter_;
    RateLimiter* limiter_;
    rpc::LineFramer framer_;
    rpc::ParsedLine parsed_;
    // Replies that arrive after the session is gone are dropped: callbacks hold a weak reference.
    std::shared_ptr<ControlSession*> self_;
    // Names the session to the target (ControlTarget::callerSession), unique in the process. The
    // target outlives the server and so every session (the service may go first).
    std::uint64_t id_;
    ControlTarget& target_;
};

} // namespace takt::agent::detail
