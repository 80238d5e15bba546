// A host-side view of a Sparkplug B group from the broker (sparkplug_fleet.h): the messages heard
// decoded by the edge node's own payload code (sparkplug_payload.h), over libmosquitto clients.
#include "takt/agent/sparkplug_fleet.h"

#include <mosquitto.h>

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "sparkplug/sparkplug_metrics.h"
#include "sparkplug/sparkplug_payload.h"
#include "takt/io/mosquitto_log.h"

namespace takt::agent {

namespace sp = sparkplug;

namespace {

std::vector<std::string_view> splitTopic(std::string_view topic) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = topic.find('/', start);
        parts.push_back(topic.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
        if (slash == std::string_view::npos) {
            return parts;
        }
        start = slash + 1;
    }
}

// bdSeq, Node Control/… and Properties/… describe the node; the rest are its data.
bool isNodeMetric(std::string_view name) {
    return name == sp::kBdSeq || name.starts_with("Node Control/") || name.starts_with("Properties/");
}

std::optional<std::uint64_t> bdSeqOf(const sp::Payload& p) {
    for (const sp::Metric& m : p.metrics) {
        if (m.name != sp::kBdSeq || m.isNull) {
            continue;
        }
        if (const auto* v = std::get_if<std::int64_t>(&m.value); v != nullptr && *v >= 0) {
            return static_cast<std::uint64_t>(*v);
        }
        if (const auto* v = std::get_if<std::uint64_t>(&m.value)) {
            return *v;
        }
    }
    return std::nullopt;
}

bool decode(std::string_view payload, sp::Payload& out, std::string& problem, std::string_view type) {
    sp::Error error;
    const std::span bytes(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
    if (sp::decodePayload(bytes, out, error, sp::Foreign::List)) {
        return true;
    }
    problem = fmt::format("{} not decoded: {}: {}", type, sp::errorCodeName(error.code), error.message);
    return false;
}

} // namespace

std::optional<std::string> FleetView::take(std::string_view topic, std::string_view payload,
                                           const std::string& server) {
    const std::vector<std::string_view> parts = splitTopic(topic);
    if ((parts.size() != 4 && parts.size() != 5) || parts[0] != "spBv1.0" || parts[1] != group_ || parts[3].empty()) {
        return std::nullopt;
    }
    const std::string_view type = parts[2];
    const bool device = parts.size() == 5;
    if (type == "NCMD" || type == "DCMD" || (device != type.starts_with('D')) ||
        (type != "NBIRTH" && type != "NDATA" && type != "NDEATH" && type != "DBIRTH" && type != "DDATA" &&
         type != "DDEATH")) {
        return std::nullopt;
    }
    std::string id(parts[3]);
    EdgeNodeView& n = nodes_[id];
    n.id = id;
    n.server = server;
    ++n.messages;
    if (type == "NBIRTH") {
        sp::Payload p;
        n.online = true;
        if (!decode(payload, p, n.problem, type)) {
            return id;
        }
        n.birthSeen = true;
        n.bdSeq = bdSeqOf(p);
        n.lastBirthMs = p.timestamp;
        n.metrics = static_cast<std::size_t>(
            std::count_if(p.metrics.begin(), p.metrics.end(),
                          [](const sp::Metric& m) { return !isNodeMetric(m.name); }) +
            std::count_if(p.foreign.begin(), p.foreign.end(), [](const std::string& m) { return !isNodeMetric(m); }));
        n.programHash.clear();
        for (const sp::Metric& m : p.metrics) {
            if (m.name == sp::kProgramHash && !m.isNull && std::holds_alternative<std::string>(m.value)) {
                n.programHash = std::get<std::string>(m.value);
            }
        }
        return id;
    }
    if (type == "NDEATH") {
        sp::Payload p;
        std::optional<std::uint64_t> seq;
        if (decode(payload, p, n.problem, type)) {
            seq = bdSeqOf(p);
        }
        n.lastDeathBdSeq = seq;
        // A death names the session it ends: one of an earlier session (a late will) leaves the
        // current birth online. A death that names none cannot be told apart: the node is offline.
        if (!seq || !n.birthSeen || !n.bdSeq || *n.bdSeq == *seq) {
            n.online = false;
            if (!n.birthSeen) {
                n.bdSeq = seq;
            }
        }
        return id;
    }
    // NDATA and device messages: a session is going on, whether or not its birth was heard.
    n.online = true;
    return id;
}

namespace {

// One broker listened to: its client and what its callbacks need.
struct Listener {
    const FleetWatchOptions* options = nullptr;
    const engine::RuntimeConfig::Sparkplug::Server* server = nullptr;
    FleetView* view = nullptr;
    std::mutex* mutex = nullptr;              // guards view, asked and every Listener's state
    std::set<std::string>* asked = nullptr;   // edge nodes sent a rebirth
    std::vector<std::string>* said = nullptr; // log lines for the caller's thread
    std::size_t index = 0;                    // in FleetWatchOptions::servers
    mosquitto* mosq = nullptr;
    bool connected = false;
    bool everConnected = false;
    bool closing = false; // the window is over: a disconnect is ours
    std::string failure;  // why it is not connected

    Listener() = default;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    ~Listener() {
        if (mosq != nullptr) {
            mosquitto_disconnect(mosq);
            mosquitto_loop_stop(mosq, false);
            mosquitto_destroy(mosq);
        }
    }
};

void onConnect(mosquitto* m, void* self, int rc) {
    auto* l = static_cast<Listener*>(self);
    {
        const std::lock_guard lock(*l->mutex);
        if (rc != 0) {
            l->failure = fmt::format("connection refused: {}", mosquitto_connack_string(rc));
            return;
        }
        l->connected = true;
        l->everConnected = true;
        l->failure.clear();
    }
    // Outside the lock: libmosquitto may call the log callback from inside, which takes it.
    const std::string topic = fmt::format("spBv1.0/{}/#", l->options->group);
    const int sub = mosquitto_subscribe(m, nullptr, topic.c_str(), 1);
    if (sub != MOSQ_ERR_SUCCESS) {
        const std::lock_guard lock(*l->mutex);
        l->failure = fmt::format("cannot subscribe to {}: {}", topic, mosquitto_strerror(sub));
    }
}

void onDisconnect(mosquitto* /*m*/, void* self, int rc) {
    auto* l = static_cast<Listener*>(self);
    const std::lock_guard lock(*l->mutex);
    if (l->connected && !l->closing) {
        l->said->push_back(fmt::format("{}: connection lost: {}", l->server->url, mosquitto_strerror(rc)));
    } else if (!l->everConnected && l->failure.empty() && rc != 0) {
        l->failure =
            fmt::format("connection lost: {}", io::mosquittoFailure(rc, l->server->tls && l->options->tlsCert.empty()));
    }
    l->connected = false;
}

// A connection that fails before it is up (a TLS handshake) says why only in libmosquitto's log.
void onLog(mosquitto* /*m*/, void* self, int level, const char* line) {
    std::optional<std::string> reason = io::mosquittoLogReason(level, line);
    auto* l = static_cast<Listener*>(self);
    const std::lock_guard lock(*l->mutex);
    if (reason && !l->connected && l->failure.empty()) {
        l->failure = std::move(*reason);
    }
}

// Node Control/Rebirth to `node`, as a host application asks for it (Sparkplug 3.0, 6.4.18).
void sendRebirth(Listener& l, const std::string& node) {
    sp::Payload payload;
    payload.timestamp = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    payload.metrics.push_back(
        sp::Metric{std::string(sp::kRebirth), std::nullopt, sp::IecType::Bool, true, false, std::nullopt, false, {}});
    std::string bytes;
    sp::Error error;
    if (!sp::encodePayload(payload, bytes, error)) {
        return;
    }
    const std::string topic = fmt::format("spBv1.0/{}/NCMD/{}", l.options->group, node);
    const int rc =
        mosquitto_publish(l.mosq, nullptr, topic.c_str(), static_cast<int>(bytes.size()), bytes.data(), 1, false);
    const std::lock_guard lock(*l.mutex);
    l.said->push_back(rc == MOSQ_ERR_SUCCESS ? fmt::format("{}: Node Control/Rebirth sent to {}", l.server->url, node)
                                             : fmt::format("{}: Node Control/Rebirth to {} not sent: {}", l.server->url,
                                                           node, mosquitto_strerror(rc)));
}

void onMessage(mosquitto* /*m*/, void* self, const mosquitto_message* msg) {
    auto* l = static_cast<Listener*>(self);
    const std::string_view payload(static_cast<const char*>(msg->payload),
                                   msg->payloadlen > 0 ? static_cast<std::size_t>(msg->payloadlen) : 0);
    std::optional<std::string> node;
    bool ask = false;
    {
        const std::lock_guard lock(*l->mutex);
        node = l->view->take(msg->topic, payload, l->server->url);
        if (node && l->options->rebirth) {
            const EdgeNodeView& n = l->view->nodes().at(*node);
            // A node whose birth was heard said all already; one heard dead has no session to ask.
            ask = !n.birthSeen && n.online && l->asked->insert(*node).second;
        }
    }
    if (ask) {
        sendRebirth(*l, *node);
    }
}

bool start(Listener& l, std::string& why) {
    const FleetWatchOptions& o = *l.options;
    // One ID per listener: the nodes of a broker cluster would end a session whose ID comes again.
    const std::string clientId = fmt::format("takt-fleet-{}-{}", ::getpid(), l.index);
    l.mosq = mosquitto_new(clientId.c_str(), true, &l);
    if (l.mosq == nullptr) {
        why = "cannot create an MQTT client";
        return false;
    }
    mosquitto_connect_callback_set(l.mosq, onConnect);
    mosquitto_disconnect_callback_set(l.mosq, onDisconnect);
    mosquitto_message_callback_set(l.mosq, onMessage);
    mosquitto_log_callback_set(l.mosq, onLog);
    // One attempt per server: the window is short, and another server may carry the group.
    mosquitto_reconnect_delay_set(l.mosq, 3600, 3600, false);
    int rc = MOSQ_ERR_SUCCESS;
    if (!o.username.empty()) {
        rc = mosquitto_username_pw_set(l.mosq, o.username.c_str(), o.password.empty() ? nullptr : o.password.c_str());
    }
    if (rc == MOSQ_ERR_SUCCESS && l.server->tls) {
        rc = mosquitto_tls_set(l.mosq, o.tlsCa.empty() ? nullptr : o.tlsCa.c_str(), nullptr,
                               o.tlsCert.empty() ? nullptr : o.tlsCert.c_str(),
                               o.tlsKey.empty() ? nullptr : o.tlsKey.c_str(), nullptr);
    }
    if (rc == MOSQ_ERR_SUCCESS) {
        rc = mosquitto_connect_async(l.mosq, l.server->host.c_str(), l.server->port, 10);
    }
    if (rc == MOSQ_ERR_SUCCESS) {
        rc = mosquitto_loop_start(l.mosq);
    }
    if (rc != MOSQ_ERR_SUCCESS) {
        why = io::mosquittoFailure(rc, l.server->tls && o.tlsCert.empty());
        return false;
    }
    return true;
}

} // namespace

bool watchFleet(const FleetWatchOptions& options, FleetView& view, std::string& error,
                std::chrono::milliseconds& listened) {
    static std::once_flag once;
    std::call_once(once, [] { mosquitto_lib_init(); });
    std::mutex mutex;
    std::set<std::string> asked;
    std::vector<std::string> said;
    std::vector<std::unique_ptr<Listener>> listeners;
    const auto say = [&] {
        std::vector<std::string> lines;
        {
            const std::lock_guard lock(mutex);
            lines.swap(said);
        }
        for (const std::string& line : lines) {
            if (options.log) {
                options.log(line);
            }
        }
    };
    for (const auto& server : options.servers) {
        auto l = std::make_unique<Listener>();
        l->options = &options;
        l->server = &server;
        l->view = &view;
        l->mutex = &mutex;
        l->asked = &asked;
        l->said = &said;
        l->index = listeners.size();
        std::string why;
        if (!start(*l, why)) {
            const std::lock_guard lock(mutex);
            l->failure = l->failure.empty() ? why : fmt::format("{} ({})", why, l->failure);
        }
        listeners.push_back(std::move(l));
    }
    const auto begin = std::chrono::steady_clock::now();
    const auto end = begin + options.timeout;
    const auto allFailed = [&] {
        const std::lock_guard lock(mutex);
        return std::all_of(listeners.begin(), listeners.end(),
                           [](const auto& l) { return !l->everConnected && !l->failure.empty(); });
    };
    constexpr int kPollMs = 20;
    while (std::chrono::steady_clock::now() < end && !allFailed()) {
        if (!options.stopRequested) {
            std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
        } else if (options.stopRequested(kPollMs)) {
            break;
        }
        say();
    }
    listened = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin);
    std::string reasons;
    bool any = false;
    {
        const std::lock_guard lock(mutex);
        for (const auto& l : listeners) {
            l->closing = true;
            if (l->everConnected) {
                any = true;
                continue;
            }
            const std::string why =
                l->failure.empty() ? fmt::format("not connected within {} ms", listened.count()) : l->failure;
            said.push_back(fmt::format("{}: {}", l->server->url, why));
            reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", l->server->url, why);
        }
    }
    listeners.clear(); // disconnects and joins each client's thread: no callback runs after this
    if (!any) {
        error = fmt::format("no broker could be reached: {}", reasons);
        return false;
    }
    say();
    return true;
}

} // namespace takt::agent
