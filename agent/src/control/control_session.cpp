// The socket-free part of a control session: framing, envelope, auth, limits and dispatch.
#include "control/control_session.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "takt/agent/rpc_limits.h"

namespace takt::agent::detail {

namespace {

using rapidjson::Value;

// The method name (or a variable's path, at most 256 bytes) as it may appear in the audit log:
// printable ASCII, at most 64 bytes.
std::string auditName(std::string_view method, std::size_t most = 64) {
    std::string out;
    for (const char c : method.substr(0, most)) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back(u > 0x20 && u < 0x7f ? c : '?');
    }
    if (method.size() > most) {
        out += "...";
    }
    return out.empty() ? std::string("-") : out;
}

std::string retryData(std::int64_t ms) {
    return fmt::format(R"({{"retry_after_ms":{}}})", ms);
}

} // namespace

int eventTypeIndex(std::string_view name) noexcept {
    for (std::size_t i = 0; i < std::size(kEventTypes); ++i) {
        if (kEventTypes[i] == name) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

// ---------------------------------------------------------------------------------------------
// ControlService

ControlService::ControlService(ControlOptions options, ControlTarget& target, std::string transport)
    : options_(std::move(options)), target_(target), transport_(std::move(transport)), tokens_(options_.tokens) {
    loadMethods();
}

ControlService::~ControlService() = default;

bool ControlService::openAudit(std::string& error) {
    if (options_.auditLog.empty()) {
        return true;
    }
    return audit_.open(options_.auditLog, options_.auditMaxBytes, options_.auditKeep, error);
}

void ControlService::loadMethods() {
    methods_.assign(ControlSession::builtins().begin(), ControlSession::builtins().end());
    for (const ControlMethod& m : target_.methods()) {
        if (rpc::findMethod(methods(), m.name) == nullptr) {
            methods_.push_back({m.name, m.summary, m.paramsSchema, m.resultSchema, m.role, Route{nullptr, m.handler}});
        }
    }
    schemas_.clear();
    for (const Method& m : methods_) {
        schemas_.add(rpc::factsOf(m));
    }
}

void ControlService::audit(std::string_view peer, std::optional<Role> role, std::string_view method, int code,
                           std::string_view item) {
    if (!audit_.isOpen()) {
        return;
    }
    const std::string body =
        fmt::format("peer={} role={} method={}{}{} {}", peer, role ? roleName(*role) : "none", auditName(method),
                    item.empty() ? "" : " name=", item.empty() ? "" : auditName(item, 256),
                    code == 0 ? std::string("ok") : fmt::format("error={}", code));
    audit_.record(body, code != 0, Clock::now());
}

ControlService::TokenCheck ControlService::checkToken(const std::string& peerKey, std::string_view token) {
    return checkLogin(
        peerKey, [&] { return tokens_.match(token); }, "unauthorized: auth.login: invalid token");
}

ControlService::TokenCheck ControlService::checkLogin(const std::string& peerKey,
                                                      const std::function<std::optional<Role>()>& match,
                                                      std::string_view refusal) {
    const Clock::time_point now = Clock::now();
    if (const std::int64_t wait = backoff_.retryAfterMs(peerKey, now); wait > 0) {
        return {std::nullopt,
                ControlAnswer::error(kRateLimited,
                                     fmt::format("too many failed logins from this peer; retry in {} ms", wait),
                                     retryData(wait))};
    }
    const std::optional<Role> role = match();
    if (!role) {
        backoff_.failed(peerKey, now);
        return {std::nullopt, ControlAnswer::error(kUnauthorized, std::string(refusal))};
    }
    // A success does not clear the peer's failures: otherwise a viewer token, used between
    // guesses at an engineer or admin token, would reset the back-off every time (and one leaked
    // low-role token would lift the back-off for the whole peer). The cost is that a user who
    // mistyped a few times and then logged in still carries those failures until a quiet period
    // of kMax forgets them (LoginBackoff::failed): a few seconds of wait, never a lock-out.
    return {role, ControlAnswer::result(fmt::format(R"({{"role":"{}"}})", roleName(*role)))};
}

RateLimiter& ControlService::callerLimiter(const std::string& key) {
    const Clock::time_point now = Clock::now();
    if (callerLimits_.size() >= 1024) {
        // A budget unused for two seconds has refilled (a second's worth at most): forgetting it
        // changes nothing for its caller.
        std::erase_if(callerLimits_, [now](const auto& e) { return now - e.second.used > std::chrono::seconds(2); });
    }
    auto it = callerLimits_.find(key);
    if (it == callerLimits_.end()) {
        it = callerLimits_.emplace(key, CallerBudget{RateLimiter(options_.maxRequestsPerSecond), now}).first;
    }
    it->second.used = now;
    return it->second.limiter;
}

bool ControlService::eventLine(const std::string& event, int& type, std::string& json, std::string& line) {
    rpc::parseLine(event, kMaxJsonDepth, eventParse_);
    if (eventParse_.status != rpc::ParsedLine::Status::Ok || !eventParse_.doc.IsObject()) {
        return false;
    }
    auto it = eventParse_.doc.FindMember("type");
    if (it == eventParse_.doc.MemberEnd() || !it->value.IsString()) {
        return false;
    }
    type = eventTypeIndex(std::string_view(it->value.GetString(), it->value.GetStringLength()));
    if (type < 0) {
        return false;
    }
    json = rpc::toJson(eventParse_.doc);
    eventLog_.add(kEventTypes[static_cast<std::size_t>(type)], json);
    line = rpc::notificationLine("event", json);
    return true;
}

void EventLog::add(std::string_view type, const std::string& eventJson) {
    Entry e{next_++, fmt::format(R"({{"seq":{},{})", next_ - 1, std::string_view(eventJson).substr(1))};
    if (type == "reload_applied" || type == "reload_rejected") {
        if (reloads_.size() == kReloads) {
            reloads_.pop_front();
        }
        reloads_.push_back(e);
    }
    std::deque<Entry>& list = type == "cycle_overrun" ? overruns_ : events_;
    if (list.size() == (&list == &overruns_ ? kOverruns : kEvents)) {
        list.pop_front();
    }
    list.push_back(std::move(e));
}

std::string EventLog::since(std::uint64_t seq) const {
    const auto list = [](const std::deque<Entry>& entries, std::uint64_t after) {
        std::string out = "[";
        for (const Entry& e : entries) {
            if (e.seq > after) {
                out += out.size() > 1 ? "," : "";
                out += e.json;
            }
        }
        return out + "]";
    };
    // The events and the overruns merged in sequence order.
    std::string events = "[";
    auto a = events_.begin();
    auto b = overruns_.begin();
    while (a != events_.end() || b != overruns_.end()) {
        const bool takeA = b == overruns_.end() || (a != events_.end() && a->seq < b->seq);
        const Entry& e = takeA ? *a++ : *b++;
        if (e.seq > seq) {
            events += events.size() > 1 ? "," : "";
            events += e.json;
        }
    }
    events += "]";
    return fmt::format(R"({{"next":{},"events":{},"reloads":{}}})", next_, events, list(reloads_, 0));
}

// ---------------------------------------------------------------------------------------------
// ControlSession

namespace {
std::uint64_t nextSessionId() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

ControlSession::ControlSession(ControlService& service, PeerInfo peer, SessionSink& sink, RateLimiter* limiter)
    : service_(service), peer_(std::move(peer)), sink_(sink), ownLimiter_(service.options().maxRequestsPerSecond),
      limiter_(limiter != nullptr ? limiter : &ownLimiter_), self_(std::make_shared<ControlSession*>(this)),
      id_(nextSessionId()), target_(service.target()) {
    if (peer_.trustedUnix && !service_.loginRequired()) {
        role_ = Role::Admin;
    } else if (peer_.grantedRole) {
        role_ = peer_.grantedRole;
    }
}

ControlSession::~ControlSession() {
    *self_ = nullptr;
    target_.sessionClosed(id_);
}

std::size_t ControlSession::lineLimit() const noexcept {
    return role_ >= Role::Engineer ? kMaxEngineerLineBytes : kMaxLineBytes;
}

void ControlSession::feed(std::string_view bytes) {
    while (!bytes.empty()) {
        // Read before each line: a login on the line before may have changed it.
        framer_.setMax(lineLimit());
        switch (framer_.next(bytes)) {
        case rpc::LineFramer::Status::Line: handleLine(framer_.line()); break;
        case rpc::LineFramer::Status::TooLong: refuseOversize(); break;
        case rpc::LineFramer::Status::NeedMore: break;
        }
    }
}

void ControlSession::finish() {
    switch (framer_.finish()) {
    case rpc::LineFramer::Status::Line: handleLine(framer_.line()); break;
    case rpc::LineFramer::Status::TooLong: refuseOversize(); break;
    case rpc::LineFramer::Status::NeedMore: break;
    }
}

void ControlSession::refuseOversize() {
    service_.audit(peer_.label, role_, "-", rpc::kInvalidRequest);
    reply(rpc::RequestId{}, ControlAnswer::error(rpc::kInvalidRequest, std::string(lineLimit() == kMaxEngineerLineBytes
                                                                                       ? kOversizeEngineerLineMessage
                                                                                       : kOversizeLineMessage)));
}

void ControlSession::reply(const rpc::RequestId& id, const ControlAnswer& answer) {
    sink_.sendLine(answer.ok ? rpc::resultLine(id, answer.json)
                             : rpc::errorLine(id, rpc::Error{answer.code, answer.message, answer.data}));
}

void ControlSession::finish(std::string_view method, const ControlAnswer& answer, const Answered& answered) {
    service_.audit(peer_.label, role_, method, answer.ok ? 0 : answer.code);
    for (const auto& [item, code] : answer.items) {
        service_.audit(peer_.label, role_, method, code, item);
    }
    answered(answer);
}

void ControlSession::handleLine(std::string_view line) {
    // An engineer's large line (a reload's program): neither its bytes nor its parsed values stay
    // held until the session's next line, whether it was dispatched or refused (dispatch has read
    // or copied the params by the time it returns).
    struct GiveBack {
        ControlSession& session;
        bool large;
        GiveBack(ControlSession& s, bool l) : session(s), large(l) {}
        GiveBack(const GiveBack&) = delete;
        GiveBack& operator=(const GiveBack&) = delete;
        ~GiveBack() {
            if (large) {
                session.parsed_.doc.SetNull();
                session.parsed_.doc.GetAllocator().Clear();
                session.framer_.release();
            }
        }
    } const giveBack{*this, line.size() > kMaxLineBytes};
    rpc::Request request;
    rpc::Error invalid;
    if (!rpc::parseRequest(line, parsed_, request, invalid, lineLimit())) {
        // An invalid envelope is answered even without an id: the client cannot know it was
        // taken for a notification.
        service_.audit(peer_.label, role_, request.method.empty() ? "-" : request.method, invalid.code);
        reply(request.id, ControlAnswer::error(invalid.code, std::move(invalid.message), std::move(invalid.data)));
        return;
    }
    // The session outlives `answered`'s every call (dispatch drops a late answer to a session
    // that is gone), so it may hold `this`.
    dispatch(request.method, *request.params, request.paramsError ? &*request.paramsError : nullptr,
             [this, id = request.id, notification = request.notification](const ControlAnswer& a) {
                 if (!notification) {
                     reply(id, a);
                 }
             });
}

// By value: a sink that hands the params on (LocalStreamSession) moves them.
void SessionSink::sendNotification(std::string_view method,
                                   std::string params) { // NOLINT(performance-unnecessary-value-param)
    sendLine(rpc::notificationLine(method, params));
}

void ControlSession::dispatchCall(std::string_view method, rapidjson::Document& params, Answered answered) {
    if (params.IsNull()) {
        params.SetObject();
    }
    // A params value that is not an object is refused as the envelope refuses one.
    const rpc::Error notObject{rpc::kInvalidParams, "invalid params: params must be an object", {}};
    dispatch(method, params, params.IsObject() ? nullptr : &notObject, std::move(answered));
}

void ControlSession::dispatch(std::string_view method, const rapidjson::Value& params, const rpc::Error* paramsError,
                              Answered answered) {
    // Every request, valid or not, takes from the connection's budget.
    if (const std::int64_t wait = limiter_->take(Clock::now()); wait > 0) {
        finish(method,
               ControlAnswer::error(kRateLimited,
                                    fmt::format("rate limited: more than {} requests a second on this connection",
                                                service_.options().maxRequestsPerSecond),
                                    retryData(wait)),
               answered);
        return;
    }
    if (paramsError != nullptr) {
        if (method == "auth.login") {
            forgetLogin();
        }
        finish(method, ControlAnswer::error(paramsError->code, paramsError->message, paramsError->data), answered);
        return;
    }
    const ControlService::Method* entry = rpc::findMethod(service_.methods(), method);
    if (entry == nullptr) {
        finish(method, ControlAnswer::error(rpc::kMethodNotFound, fmt::format("Method '{}' is not available.", method)),
               answered);
        return;
    }
    if (entry->role) {
        if (!role_) {
            finish(method,
                   ControlAnswer::error(kUnauthorized,
                                        fmt::format("unauthorized: log in with auth.login before '{}'", method)),
                   answered);
            return;
        }
        if (*role_ < *entry->role) {
            finish(method,
                   ControlAnswer::error(kForbidden, fmt::format("forbidden: '{}' needs role {} (this session "
                                                                "is {})",
                                                                method, roleName(*entry->role), roleName(*role_))),
                   answered);
            return;
        }
    }
    if (rpc::Error e; !service_.schemas_.check(method, params, e)) {
        if (method == "auth.login") {
            forgetLogin();
        }
        finish(method, ControlAnswer::error(e.code, e.message, e.data), answered);
        return;
    }
    if (!service_.loginRequired()) {
        proven_ = true;
    }
    if (entry->handler.builtin != nullptr) {
        finish(method, (this->*entry->handler.builtin)(params), answered);
        return;
    }
    // The target may answer now or later; `reply` runs exactly once, on the server thread.
    ++pending_;
    auto self = std::weak_ptr<ControlSession*>(self_);
    auto done = std::make_shared<bool>(false);
    auto answer = [self, done, answered = std::move(answered), name = std::string(method)](const ControlAnswer& a) {
        if (*done) {
            return;
        }
        *done = true;
        auto alive = self.lock();
        if (!alive || *alive == nullptr) {
            return;
        }
        ControlSession& s = **alive;
        --s.pending_;
        s.finish(name, a, answered);
    };
    try {
        service_.target().setCallerSession(id_);
        entry->handler.target(service_.target(), method, params, answer);
        service_.target().setCallerSession(0);
    } catch (const std::exception& e) {
        service_.target().setCallerSession(0);
        answer(ControlAnswer::error(rpc::kInternalError, fmt::format("internal error in '{}': {}", method, e.what())));
    }
}

#define TAKT_NONE R"({"type":"object","properties":{},"additionalProperties":false})"

std::span<const ControlService::Method> ControlSession::builtins() {
    using Route = ControlService::Route;
    static const ControlService::Method kTable[] = {
        {"auth.login", "Log in with a token; the session gets the token's role",
         R"({"type":"object","required":["token"],"properties":{"token":{"type":"string"}},"additionalProperties":false})",
         R"({"type":"object","required":["role"],"properties":{"role":{"enum":["viewer","operator","engineer","admin"]}}})",
         std::nullopt, Route{&ControlSession::login, nullptr}},
        // Any params are accepted so a keep-alive may carry padding.
        {"agent.ping", "Liveness check (any params are ignored)", R"({"type":"object"})",
         R"({"type":"object","required":["ok","version","uptime_s"],"properties":{"ok":{"const":true},)"
         R"("version":{"type":"string"},"uptime_s":{"type":"number"}}})",
         std::nullopt, Route{&ControlSession::ping, nullptr}},
        {"agent.describe", "Transport, version, methods and notifications", TAKT_NONE,
         R"({"type":"object","required":["transport","version","methods","notifications"],"properties":{)"
         R"("transport":{"enum":["unix","tcp","tls"]},"version":{"type":"string"},)"
         R"("methods":{"type":"array","items":{"type":"string"}},"notifications":{"type":"array"}}})",
         std::nullopt, Route{&ControlSession::describe, nullptr}},
        {"agent.schema", "Role and JSON Schemas of one method, or of all without `method`",
         R"({"type":"object","properties":{"method":{"type":"string"}},"additionalProperties":false})",
         R"({"type":"object","properties":{"method":{"type":"string"},"summary":{"type":"string"},)"
         R"("role":{"type":["string","null"]},"params":{"type":"object"},"result":{"type":"object"},)"
         R"("methods":{"type":"array"}}})",
         std::nullopt, Route{&ControlSession::schema, nullptr}},
        {"events.subscribe", "Receive `event` notifications of these types (absent: all)",
         R"({"type":"object","properties":{"types":{"type":"array","items":{"type":"string"}}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["subscribed"],"properties":{"subscribed":{"type":"array"}}})", Role::Viewer,
         Route{&ControlSession::subscribe, nullptr}},
        {"events.recent",
         "The recent events after `since` (at most 256, and 32 overruns) and the online-change history (32)",
         R"({"type":"object","properties":{"since":{"type":"integer","minimum":0}},"additionalProperties":false})",
         R"({"type":"object","required":["next","events","reloads"],"properties":{"next":{"type":"integer"},)"
         R"("events":{"type":"array"},"reloads":{"type":"array"}}})",
         Role::Viewer, Route{&ControlSession::recentEvents, nullptr}},
        {"var.subscribe",
         "Receive `var.changed` notifications of the variables (`names`, or those `pattern` matches) whose value "
         "changed, sampled at a cycle boundary at most every `interval_ms`",
         R"({"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}},)"
         R"("pattern":{"type":"string"},)"
         R"("interval_ms":{"type":"integer","minimum":10,"maximum":3600000},)"
         R"("deadband":{"type":"number","minimum":0},"format":{"enum":["typed","iec"]}},"additionalProperties":false})",
         R"({"type":"object","required":["subscription","names","interval_ms"],"properties":{)"
         R"("subscription":{"type":"integer"},"names":{"type":"array"},"interval_ms":{"type":"integer"}}})",
         Role::Viewer, Route{&ControlSession::subscribeValues, nullptr}},
        {"var.unsubscribe", "End a value subscription",
         R"({"type":"object","required":["subscription"],"properties":{"subscription":{"type":"integer","minimum":1}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["subscription","unsubscribed"],"properties":{)"
         R"("subscription":{"type":"integer"},"unsubscribed":{"const":true}}})",
         Role::Viewer, Route{&ControlSession::unsubscribeValues, nullptr}},
    };
    return kTable;
}

#undef TAKT_NONE

ControlAnswer ControlSession::ping(const Value&) {
    const double up = std::chrono::duration<double>(Clock::now() - service_.started_).count();
    return ControlAnswer::result(
        fmt::format(R"({{"ok":true,"version":{},"uptime_s":{:.3f}}})", rpc::quoted(service_.options().version), up));
}

void ControlSession::forgetLogin() {
    if (!service_.loginRequired()) {
        return; // the role of a trusted Unix peer comes from the socket, not from a login
    }
    role_.reset();
    proven_ = false;
    subscriptions_ = 0; // events need a role too, and so do values
    if (values_ != nullptr) {
        values_->clear();
    }
}

// Every auth.login that does not log in (malformed, backed off or a wrong token) drops the
// session's role: a client whose new login failed must not go on under the role of an older one.
ControlAnswer ControlSession::login(const Value& params) {
    const Value& token = params["token"]; // a string: the schema has checked it
    if (!service_.loginRequired()) {
        // No tokens configured: only trusted Unix peers get here, and they are admin already.
        return ControlAnswer::result(fmt::format(R"({{"role":"{}"}})", roleName(role_.value_or(Role::Admin))));
    }
    ControlService::TokenCheck checked =
        service_.checkToken(peer_.key, std::string_view(token.GetString(), token.GetStringLength()));
    if (!checked.role) {
        forgetLogin();
        return std::move(checked.answer);
    }
    role_ = checked.role;
    proven_ = true;
    return std::move(checked.answer);
}

ControlAnswer ControlSession::subscribe(const Value& params) {
    std::uint32_t mask = 0;
    // The schema has checked that `types` is an array of strings; which strings name events is
    // kEventTypes' to say.
    auto it = params.FindMember("types");
    if (it == params.MemberEnd()) {
        mask = (1U << std::size(kEventTypes)) - 1;
    } else {
        for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
            const std::string_view name(it->value[i].GetString(), it->value[i].GetStringLength());
            const int type = eventTypeIndex(name);
            if (type < 0) {
                return ControlAnswer::error(
                    rpc::kInvalidParams,
                    fmt::format("invalid params: types[{}] is not an event type ({})", i, rpc::quoted(name)),
                    fmt::format(R"({{"param":"types[{}]"}})", i));
            }
            mask |= 1U << type;
        }
    }
    subscriptions_ = mask;
    std::string out = R"({"subscribed":[)";
    bool first = true;
    for (std::size_t i = 0; i < std::size(kEventTypes); ++i) {
        if ((mask & (1U << i)) != 0) {
            out += first ? "\"" : ",\"";
            out += kEventTypes[i];
            out += "\"";
            first = false;
        }
    }
    return ControlAnswer::result(out + "]}");
}

ControlAnswer ControlSession::subscribeValues(const Value& params) {
    ValueFeed* feed = service_.target().valueFeed();
    if (feed == nullptr) {
        return ControlAnswer::error(rpc::kCommandFailed, "this endpoint serves no program variables");
    }
    if (values_ == nullptr) {
        values_ = std::make_unique<ValueSubscriptions>(*feed);
    }
    ControlAnswer answer = values_->subscribe(params, Clock::now());
    if (answer.ok && service_.valuesWanted) {
        service_.valuesWanted();
    }
    return answer;
}

ControlAnswer ControlSession::unsubscribeValues(const Value& params) {
    if (values_ == nullptr) {
        const rpc::Error e = rpc::invalidParam(
            "subscription", fmt::format("subscription: {} is not a subscription of this session",
                                        params["subscription"].GetUint64())); // the schema has checked it
        return ControlAnswer::error(e.code, e.message, e.data);
    }
    return values_->unsubscribe(params);
}

std::optional<Clock::time_point> ControlSession::sampleValues(Clock::time_point now, std::size_t& budget) {
    if (values_ == nullptr) {
        return std::nullopt;
    }
    return values_->sample(
        now, sink_.backlogged(),
        [this](std::string params) { sink_.sendNotification("var.changed", std::move(params)); }, budget);
}

// A client that polls (the web page) asks with the `next` of its last answer and gets only what
// came after it; one that lags by more than the log holds gets what is left.
ControlAnswer ControlSession::recentEvents(const Value& params) {
    const auto it = params.FindMember("since");
    const std::uint64_t since = it != params.MemberEnd() && it->value.IsUint64() ? it->value.GetUint64() : 0;
    return ControlAnswer::result(service_.eventLog_.since(since));
}

ControlAnswer ControlSession::describe(const Value&) {
    const std::vector<rpc::MethodFacts> methods = rpc::factsOf(service_.methods());
    return ControlAnswer::result(
        fmt::format(R"({{"transport":"{}","version":{},"methods":{},"notifications":["event","var.changed"]}})",
                    service_.transport_, rpc::quoted(service_.options().version), rpc::namesJson(methods)));
}

ControlAnswer ControlSession::schema(const Value& params) {
    auto it = params.FindMember("method");
    if (it == params.MemberEnd()) {
        std::string out = R"({"methods":[)";
        for (const ControlService::Method& m : service_.methods()) {
            out += (out.back() == '[' ? "" : ",") + rpc::schemaJson(rpc::factsOf(m), true);
        }
        return ControlAnswer::result(out + "]}");
    }
    const ControlService::Method* m =
        rpc::findMethod(service_.methods(), std::string_view(it->value.GetString(), it->value.GetStringLength()));
    if (m == nullptr) {
        return ControlAnswer::error(rpc::kInvalidParams, "invalid params: 'method' names no method of this endpoint",
                                    R"({"param":"method"})");
    }
    return ControlAnswer::result(rpc::schemaJson(rpc::factsOf(*m), true));
}

} // namespace takt::agent::detail
