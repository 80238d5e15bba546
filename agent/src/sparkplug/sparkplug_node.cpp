// The Sparkplug B edge node (sparkplug_node.h): one thread owns every piece of state; libmosquitto's
// network thread and the control service's thread only hand events over to it through a queue.
#include "takt/agent/sparkplug_node.h"

#include <mosquitto.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "control/control_runtime_internal.h"
#include "rpc/rpc_json.h"
#include "sparkplug/sparkplug_metrics.h"
#include "takt/agent/value_feed.h"

namespace takt::agent {

namespace {

namespace fs = std::filesystem;
namespace sp = sparkplug;
using Clock = std::chrono::steady_clock;

// A server that has not accepted the connection within this is given up for the next one.
constexpr auto kConnectTimeout = std::chrono::seconds(5);
// After every server of the list failed in a row, the next round waits this long, doubling.
constexpr auto kFirstRoundDelay = std::chrono::milliseconds(1000);
constexpr auto kMaxRoundDelay = std::chrono::milliseconds(10'000);
constexpr auto kCallTimeout = std::chrono::seconds(10);
constexpr int kKeepaliveSeconds = 10;
// Metrics of one var.subscribe (ValueFeed's limit); a node subscribes in chunks of it.
constexpr std::size_t kChunk = ValueFeed::kMaxPerSubscription;
constexpr std::size_t kMaxMetrics = 16 * kChunk;
// Changes kept while no session may publish, sent as historical data after the next birth; past
// this the oldest are dropped (and counted). About 100 bytes each: 5 MB at most.
constexpr std::size_t kMaxHistory = 50'000;
// Metrics per NDATA of historical data.
constexpr std::size_t kHistoryChunk = 1000;

std::uint64_t nowMs() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

struct Event {
    enum class Kind : std::uint8_t { Connected, Disconnected, Message, Changed, Reloaded, Log, Stop };
    Kind kind = Kind::Stop;
    // The connection it comes from (Impl::connection): events of an earlier one are dropped. A
    // number, not the client's address, which the next client may well be given again.
    std::uint64_t connection = 0;
    int rc = 0;
    std::string topic;
    std::string data;
    std::uint64_t epoch = 0; // the metric set a change belongs to
};

} // namespace

struct SparkplugNode::Impl {
    Impl(SparkplugOptions o, SparkplugSetup s, ControlServer& c)
        : options(std::move(o)), setup(std::move(s)), control(c) {
        base = fmt::format("spBv1.0/{}/", options.groupId);
        ncmdTopic = base + "NCMD/" + options.edgeNodeId;
        stateTopic = options.primaryHostId.empty() ? std::string() : "spBv1.0/STATE/" + options.primaryHostId;
        bdSeqFile = (fs::path(setup.stateDir) / ".takt" / "sparkplug" / "bdseq").string();
    }

    // --- hand-over, on any thread
    void push(Event e) {
        {
            const std::lock_guard lock(mutex);
            events.push_back(std::move(e));
        }
        cv.notify_one();
    }
    // A warning from a callback of the control service, said on the node's thread.
    void pushLog(std::string line) { push(Event{Event::Kind::Log, 0, 1, {}, std::move(line), 0}); }
    // libmosquitto's callbacks get the Link of their client: which node, which connection. A Link
    // outlives its client's network thread (drop() joins it before the next connect replaces it).
    struct Link {
        Impl* impl = nullptr;
        std::uint64_t connection = 0;
    };
    static void onConnect(mosquitto* /*m*/, void* self, int rc) {
        const auto* l = static_cast<const Link*>(self);
        l->impl->push(Event{Event::Kind::Connected, l->connection, rc, {}, {}, 0});
    }
    static void onDisconnect(mosquitto* /*m*/, void* self, int rc) {
        const auto* l = static_cast<const Link*>(self);
        l->impl->push(Event{Event::Kind::Disconnected, l->connection, rc, {}, {}, 0});
    }
    static void onMessage(mosquitto* /*m*/, void* self, const mosquitto_message* msg) {
        const auto* l = static_cast<const Link*>(self);
        Event e{Event::Kind::Message, l->connection, 0, msg->topic, {}, 0};
        if (msg->payloadlen > 0) {
            e.data.assign(static_cast<const char*>(msg->payload), static_cast<std::size_t>(msg->payloadlen));
        }
        l->impl->push(std::move(e));
    }

    // --- the node's thread
    void run();
    void handle(Event& e);
    void log(bool warning, const std::string& line) {
        if (setup.log) {
            setup.log(warning, line);
        }
    }
    ControlServer::Caller caller() const {
        ControlServer::Caller c;
        c.origin = "sparkplug";
        c.peer = options.primaryHostId.empty()
                     ? fmt::format("{}:{}", options.servers[server].host, options.servers[server].port)
                     : options.primaryHostId;
        return c;
    }
    MethodAnswer callSync(const std::string& method, const std::string& params);
    void loadMetrics();
    void closeStreams();
    void connect();
    void drop();
    void failed(const std::string& why);
    void sendDeath();
    void publishDue();
    void birth();
    void keep(const std::vector<std::size_t>& changed);
    void sendHistory();
    void data();
    bool publish(const std::string& type, const sp::Payload& payload, int qos);
    void command(const std::string& bytes);
    void state(const std::string& text);
    void saveBdSeq();

    SparkplugOptions options;
    SparkplugSetup setup;
    ControlServer& control;
    std::string base, ncmdTopic, stateTopic, bdSeqFile;

    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Event> events;
    std::atomic<std::size_t> changesQueued{0};
    std::thread thread;

    sp::MetricSet metrics;
    std::uint64_t epoch = 0;
    std::vector<std::uint64_t> streams;
    std::uint64_t eventStream = 0;

    mosquitto* mosq = nullptr;
    Link link;
    std::uint64_t connection = 0; // numbers the connections
    std::size_t server = 0;
    bool connected = false;
    bool born = false;
    bool hostOnline = false;
    std::uint64_t hostTimestamp = 0;
    std::optional<Clock::time_point> connectDeadline;
    std::optional<Clock::time_point> retryAt;
    std::size_t failuresInRound = 0;
    std::chrono::milliseconds roundDelay = kFirstRoundDelay;
    std::uint64_t bdSeq = 0;
    bool bdSeqUsed = false;                  // a connection was made with it: the next session takes the next one
    std::optional<std::uint64_t> savedBdSeq; // what the bdSeq file holds
    std::uint8_t seq = 0;

    // Changes while offline (born once, no session that may publish now), oldest first.
    struct Kept {
        std::string path;
        sp::IecType type = sp::IecType::Bool;
        sp::Value value;
        std::uint64_t timestamp = 0; // ms since 1970: when the change stream delivered it
    };
    std::deque<Kept> history;
    std::uint64_t historyDropped = 0;
    bool everBorn = false;
};

MethodAnswer SparkplugNode::Impl::callSync(const std::string& method, const std::string& params) {
    auto promise = std::make_shared<std::promise<MethodAnswer>>();
    std::future<MethodAnswer> answer = promise->get_future();
    ControlServer::Call call;
    call.caller = caller();
    call.role = Role::Viewer;
    call.method = method;
    call.params.Parse(params.c_str(), params.size());
    control.call(std::move(call), [promise](MethodAnswer a) { promise->set_value(std::move(a)); });
    if (answer.wait_for(kCallTimeout) != std::future_status::ready) {
        return MethodAnswer::error(rpc::kInternalError, fmt::format("{}: no answer within {} s", method,
                                                                    std::chrono::seconds(kCallTimeout).count()));
    }
    return answer.get();
}

void SparkplugNode::Impl::closeStreams() {
    for (const std::uint64_t id : streams) {
        control.closeStream(id);
    }
    streams.clear();
}

// The metric set of the running program: var.list paged through, filtered by expose, then one
// var.subscribe per chunk of names. The first notification of each carries every value: once
// all are in, the set is complete and can be born.
void SparkplugNode::Impl::loadMetrics() {
    closeStreams();
    ++epoch;
    metrics = sp::MetricSet{};
    std::uint64_t offset = 0;
    std::size_t skipped = 0;
    for (;;) {
        const MethodAnswer a =
            callSync("var.list", fmt::format(R"({{"pattern":"*","offset":{},"limit":1000}})", offset));
        rapidjson::Document doc;
        if (!a.ok || doc.Parse(a.json.c_str(), a.json.size()).HasParseError() || !doc.IsObject() ||
            !doc.HasMember("variables") || !doc["variables"].IsArray() || !doc.HasMember("total") ||
            !doc["total"].IsUint64()) {
            log(true, fmt::format("sparkplug: var.list failed: {}", a.message));
            break;
        }
        const rapidjson::Value& rows = doc["variables"];
        for (const rapidjson::Value& row : rows.GetArray()) {
            if (!row.IsObject()) {
                continue;
            }
            const auto path = row.FindMember("path");
            if (path == row.MemberEnd() || !path->value.IsString() ||
                !exposedBy(options.expose, path->value.GetString())) {
                continue;
            }
            if (metrics.size() >= kMaxMetrics) {
                ++skipped;
                continue;
            }
            (void)metrics.addListed(row);
        }
        offset += rows.Size();
        if (rows.Empty() || offset >= doc["total"].GetUint64()) {
            break;
        }
    }
    if (skipped > 0) {
        log(true,
            fmt::format("sparkplug: {} variables left out: at most {} metrics (narrow expose)", skipped, kMaxMetrics));
    }
    metrics.seal();
    const std::vector<std::string> paths = metrics.paths();
    const std::uint32_t interval = std::max<std::uint32_t>(10, setup.cycleIntervalMs);
    for (std::size_t first = 0; first < paths.size(); first += kChunk) {
        rapidjson::Document params(rapidjson::kObjectType);
        auto& alloc = params.GetAllocator();
        rapidjson::Value names(rapidjson::kArrayType);
        for (std::size_t i = first; i < std::min(paths.size(), first + kChunk); ++i) {
            names.PushBack(rapidjson::Value(paths[i].c_str(), alloc), alloc);
        }
        params.AddMember("names", names, alloc);
        params.AddMember("interval_ms", interval, alloc);
        ControlServer::Call call;
        call.caller = caller();
        call.role = Role::Viewer;
        call.method = "var.subscribe";
        call.params.Swap(params);
        ControlServer::Stream stream;
        stream.answer = [this](const MethodAnswer& a) {
            if (!a.ok) {
                pushLog(fmt::format("sparkplug: var.subscribe: {}", a.message));
            }
        };
        stream.notification = [this, e = epoch](std::string_view method, std::string params) {
            if (method == "var.changed") {
                ++changesQueued;
                push(Event{Event::Kind::Changed, 0, 0, {}, std::move(params), e});
            }
        };
        // While the node has not taken the last change, the service merges the next ones (the
        // latest value wins) instead of queueing every cycle's.
        stream.backlogged = [this] { return changesQueued.load() > 0; };
        streams.push_back(control.openStream(std::move(call), std::move(stream)));
    }
    log(false, fmt::format("sparkplug: {} metrics", metrics.size()));
}

void SparkplugNode::Impl::saveBdSeq() {
    const std::string tmp = bdSeqFile + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << bdSeq << "\n";
        if (!out.flush()) {
            log(true, fmt::format("sparkplug: cannot write {}: the next start may repeat bdSeq {}", tmp, bdSeq));
            return;
        }
    }
    std::error_code ec;
    fs::rename(tmp, bdSeqFile, ec);
    if (ec) {
        log(true, fmt::format("sparkplug: cannot replace {}: {}", bdSeqFile, ec.message()));
        return;
    }
    savedBdSeq = bdSeq;
}

// A new session on servers[server]: the next bdSeq, NDEATH with it as the will, connect.
void SparkplugNode::Impl::connect() {
    retryAt.reset();
    if (bdSeqUsed) {
        bdSeq = (bdSeq + 1) % 256;
        bdSeqUsed = false;
    }
    // Kept before the broker can see it: a restart must never reuse a bdSeq a host has seen.
    if (savedBdSeq != bdSeq) {
        saveBdSeq();
    }
    const auto& s = options.servers[server];
    const std::string clientId = fmt::format("takt-{}-{}", options.groupId, options.edgeNodeId);
    link = Link{this, ++connection};
    mosq = mosquitto_new(clientId.c_str(), true, &link);
    if (mosq == nullptr) {
        failed("cannot create an MQTT client");
        return;
    }
    mosquitto_connect_callback_set(mosq, &Impl::onConnect);
    mosquitto_disconnect_callback_set(mosq, &Impl::onDisconnect);
    mosquitto_message_callback_set(mosq, &Impl::onMessage);
    // The node moves to the next server itself: libmosquitto's own reconnect waits out of the way.
    mosquitto_reconnect_delay_set(mosq, 3600, 3600, false);
    int rc = MOSQ_ERR_SUCCESS;
    if (!options.username.empty()) {
        rc = mosquitto_username_pw_set(mosq, options.username.c_str(),
                                       options.password.empty() ? nullptr : options.password.c_str());
    }
    if (rc == MOSQ_ERR_SUCCESS && s.tls) {
        rc = mosquitto_tls_set(mosq, options.tlsCa.c_str(), nullptr,
                               options.tlsCert.empty() ? nullptr : options.tlsCert.c_str(),
                               options.tlsKey.empty() ? nullptr : options.tlsKey.c_str(), nullptr);
    }
    std::string death;
    sp::Error error;
    sp::Payload payload;
    payload.timestamp = nowMs();
    payload.metrics.push_back(sp::Metric{std::string(sp::kBdSeq), std::nullopt, sp::IecType::Lint,
                                         static_cast<std::int64_t>(bdSeq), false, std::nullopt, false});
    if (rc == MOSQ_ERR_SUCCESS && sp::encodePayload(payload, death, error)) {
        const std::string topic = base + "NDEATH/" + options.edgeNodeId;
        rc = mosquitto_will_set(mosq, topic.c_str(), static_cast<int>(death.size()), death.data(), 1, false);
    }
    if (rc == MOSQ_ERR_SUCCESS) {
        rc = mosquitto_connect_async(mosq, s.host.c_str(), s.port, kKeepaliveSeconds);
    }
    if (rc == MOSQ_ERR_SUCCESS) {
        rc = mosquitto_loop_start(mosq);
    }
    if (rc != MOSQ_ERR_SUCCESS) {
        failed(mosquitto_strerror(rc));
        return;
    }
    connectDeadline = Clock::now() + kConnectTimeout;
}

// Ends the connection (no NDEATH: the caller sends it when the session was born).
void SparkplugNode::Impl::drop() {
    if (mosq != nullptr) {
        mosquitto_disconnect(mosq);
        mosquitto_loop_stop(mosq, false);
        mosquitto_destroy(mosq);
        mosq = nullptr;
    }
    connected = false;
    born = false;
    hostOnline = false;
    hostTimestamp = 0;
    connectDeadline.reset();
}

// The session on servers[server] is over: the next server, at once while the round goes on,
// after a growing delay once every server failed in a row.
void SparkplugNode::Impl::failed(const std::string& why) {
    const auto& s = options.servers[server];
    log(true, fmt::format("sparkplug: {}: {}", s.url, why));
    drop();
    server = (server + 1) % options.servers.size();
    if (++failuresInRound >= options.servers.size()) {
        failuresInRound = 0;
        retryAt = Clock::now() + roundDelay;
        roundDelay = std::min(roundDelay * 2, kMaxRoundDelay);
    } else {
        retryAt = Clock::now();
    }
}

// NDEATH published by the node itself before it disconnects on purpose: a clean disconnect does
// not fire the will.
void SparkplugNode::Impl::sendDeath() {
    if (!connected) {
        return;
    }
    sp::Payload payload;
    payload.timestamp = nowMs();
    payload.metrics.push_back(sp::Metric{std::string(sp::kBdSeq), std::nullopt, sp::IecType::Lint,
                                         static_cast<std::int64_t>(bdSeq), false, std::nullopt, false});
    (void)publish("NDEATH", payload, 1);
    for (int i = 0; i < 100 && mosquitto_want_write(mosq); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool SparkplugNode::Impl::publish(const std::string& type, const sp::Payload& payload, int qos) {
    std::string bytes;
    sp::Error error;
    if (!sp::encodePayload(payload, bytes, error)) {
        log(true, fmt::format("sparkplug: {} not sent: {} ({})", type, error.message, error.metric));
        return false;
    }
    const std::string topic = base + type + "/" + options.edgeNodeId;
    const int rc =
        mosquitto_publish(mosq, nullptr, topic.c_str(), static_cast<int>(bytes.size()), bytes.data(), qos, false);
    if (rc != MOSQ_ERR_SUCCESS) {
        log(true, fmt::format("sparkplug: {} not sent: {}", type, mosquitto_strerror(rc)));
        return false;
    }
    return true;
}

// Births or sends what changed, when the session may publish: connected, every value known,
// and (with primary_host_id) the host application online.
void SparkplugNode::Impl::publishDue() {
    if (!connected || !metrics.complete() || (!stateTopic.empty() && !hostOnline)) {
        return;
    }
    if (!born) {
        birth();
    } else {
        data();
    }
}

void SparkplugNode::Impl::birth() {
    sp::Payload payload;
    payload.timestamp = nowMs();
    seq = 0;
    payload.seq = seq;
    payload.metrics.push_back(sp::Metric{std::string(sp::kBdSeq), std::nullopt, sp::IecType::Lint,
                                         static_cast<std::int64_t>(bdSeq), false, std::nullopt, false});
    for (const std::string_view name : {sp::kRebirth, sp::kNextServer}) {
        const sp::MetricSpec* spec = metrics.table().byName(name);
        payload.metrics.push_back(
            sp::Metric{std::string(name), spec->alias, sp::IecType::Bool, false, false, std::nullopt, false});
    }
    for (sp::MetricState& m : metrics.metrics()) {
        payload.metrics.push_back(
            sp::Metric{m.spec.name, m.spec.alias, m.spec.type, *m.value, false, std::nullopt, false});
        m.dirty = false;
    }
    if (publish("NBIRTH", payload, 0)) {
        born = true;
        everBorn = true;
        log(false, fmt::format("sparkplug: NBIRTH on {} (bdSeq {}, {} metrics)", options.servers[server].url, bdSeq,
                               metrics.size()));
        sendHistory();
    }
}

void SparkplugNode::Impl::keep(const std::vector<std::size_t>& changed) {
    const std::uint64_t now = nowMs();
    for (const std::size_t i : changed) {
        const sp::MetricState& m = metrics.metrics()[i];
        history.push_back(Kept{m.path, m.spec.type, *m.value, now});
        if (history.size() > kMaxHistory) {
            history.pop_front();
            ++historyDropped;
        }
    }
}

// The changes kept while offline, after the birth that ends the outage: NDATA by the new birth's
// aliases, each metric historical with the time it changed. Metrics an online change removed or
// retyped meanwhile are left out.
void SparkplugNode::Impl::sendHistory() {
    if (history.empty() && historyDropped == 0) {
        return;
    }
    std::size_t sent = 0;
    sp::Payload payload;
    const auto flush = [&] {
        if (payload.metrics.empty()) {
            return;
        }
        seq = static_cast<std::uint8_t>(seq + 1);
        payload.seq = seq;
        payload.timestamp = nowMs();
        if (publish("NDATA", payload, 0)) {
            sent += payload.metrics.size();
        }
        payload.metrics.clear();
    };
    for (Kept& k : history) {
        const sp::MetricState* m = metrics.byPath(k.path);
        if (m == nullptr || m->spec.type != k.type) {
            continue;
        }
        payload.metrics.push_back(sp::Metric{{}, m->spec.alias, k.type, std::move(k.value), false, k.timestamp, true});
        if (payload.metrics.size() >= kHistoryChunk) {
            flush();
        }
    }
    flush();
    log(historyDropped > 0,
        fmt::format("sparkplug: {} changes kept while offline sent as historical data{}", sent,
                    historyDropped > 0
                        ? fmt::format(" ({} older ones dropped: at most {} are kept)", historyDropped, kMaxHistory)
                        : std::string()));
    history.clear();
    historyDropped = 0;
}

void SparkplugNode::Impl::data() {
    sp::Payload payload;
    payload.timestamp = nowMs();
    for (sp::MetricState& m : metrics.metrics()) {
        if (m.dirty) {
            payload.metrics.push_back(sp::Metric{{}, m.spec.alias, m.spec.type, *m.value, false, std::nullopt, false});
            m.dirty = false;
        }
    }
    if (payload.metrics.empty()) {
        return;
    }
    seq = static_cast<std::uint8_t>(seq + 1); // 0..255 across NBIRTH and NDATA
    payload.seq = seq;
    (void)publish("NDATA", payload, 0);
}

// An NCMD: Node Control first, then the variable writes. A write to a CONSTANT or to an input
// refuses the whole command (nothing written, each refusal logged and audited); the others go
// through var.write with command_role, each audited as the endpoint audits it.
void SparkplugNode::Impl::command(const std::string& bytes) {
    std::vector<sp::MetricWrite> writes;
    sp::Error error;
    const ControlServer::Caller who = caller();
    if (!sp::decodeCommand(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                           metrics.table(), writes, error)) {
        log(true, fmt::format("sparkplug: NCMD refused: {}{}{}", sp::errorCodeName(error.code),
                              error.metric.empty() ? "" : " on " + error.metric, ": " + error.message));
        control.audit(who, options.commandRole, "sparkplug.ncmd", rpc::kInvalidParams);
        return;
    }
    bool rebirth = false;
    bool next = false;
    std::vector<std::pair<const sp::MetricState*, const sp::MetricWrite*>> variables;
    bool refused = false;
    for (const sp::MetricWrite& w : writes) {
        if (w.name == sp::kRebirth) {
            rebirth = rebirth || std::get<bool>(w.value);
            continue;
        }
        if (w.name == sp::kNextServer) {
            next = next || std::get<bool>(w.value);
            continue;
        }
        const sp::MetricState* m = metrics.byName(w.name);
        if (m == nullptr) {
            continue; // the table holds only the set's metrics and Node Control
        }
        if (m->constant || m->input) {
            log(true, fmt::format("sparkplug: NCMD refused: {} is {}: nothing of the command was written", w.name,
                                  m->constant ? "a CONSTANT" : fmt::format("an input the program does not own")));
            control.audit(who, options.commandRole, "var.write", rpc::kInvalidParams);
            refused = true;
            continue;
        }
        variables.emplace_back(m, &w);
    }
    if (refused) {
        return;
    }
    for (const auto& [m, w] : variables) {
        ControlServer::Call call;
        call.caller = who;
        call.role = options.commandRole;
        call.method = "var.write";
        const std::string params = fmt::format(R"({{"name":{},"value":{}}})", rpc::quoted(m->path),
                                               sp::typedJson(m->typeName, m->spec.type, w->value));
        call.params.Parse(params.c_str(), params.size());
        control.call(std::move(call), [this, name = w->name](const MethodAnswer& a) {
            if (!a.ok) {
                pushLog(fmt::format("sparkplug: NCMD write of {} refused: {} ({})", name, a.message, a.code));
            }
        });
    }
    if (next) {
        log(false, "sparkplug: NCMD Node Control/Next Server");
        sendDeath();
        failed("left for the next server (Node Control/Next Server)");
        return;
    }
    if (rebirth) {
        born = false;
        publishDue();
    }
}

// The primary host application's STATE (Sparkplug 3.0): {"online":bool,"timestamp":ms}. An older
// timestamp than the last one seen is a stale message and ignored. Going offline while the node
// is born ends the session: NDEATH, then the next server.
void SparkplugNode::Impl::state(const std::string& text) {
    rapidjson::Document doc;
    if (doc.Parse(text.c_str(), text.size()).HasParseError() || !doc.IsObject() || !doc.HasMember("online") ||
        !doc["online"].IsBool() || !doc.HasMember("timestamp") || !doc["timestamp"].IsUint64()) {
        log(true, fmt::format("sparkplug: {}: not a Sparkplug 3.0 STATE payload ({{\"online\":…,\"timestamp\":…}}), "
                              "ignored",
                              stateTopic));
        return;
    }
    const std::uint64_t timestamp = doc["timestamp"].GetUint64();
    if (timestamp < hostTimestamp) {
        return;
    }
    hostTimestamp = timestamp;
    const bool online = doc["online"].GetBool();
    if (online) {
        hostOnline = true;
        publishDue();
        return;
    }
    hostOnline = false;
    if (born) {
        log(false, fmt::format("sparkplug: host application {} went offline", options.primaryHostId));
        sendDeath();
        failed(fmt::format("left: host application {} offline", options.primaryHostId));
    }
}

void SparkplugNode::Impl::handle(Event& e) {
    switch (e.kind) {
    case Event::Kind::Connected:
        if (e.connection != connection || mosq == nullptr) {
            return;
        }
        if (e.rc != 0) {
            failed(fmt::format("connection refused: {}", mosquitto_connack_string(e.rc)));
            return;
        }
        connected = true;
        bdSeqUsed = true;
        connectDeadline.reset();
        failuresInRound = 0;
        roundDelay = kFirstRoundDelay;
        log(false, fmt::format("sparkplug: connected to {} (bdSeq {})", options.servers[server].url, bdSeq));
        (void)mosquitto_subscribe(mosq, nullptr, ncmdTopic.c_str(), 1);
        if (!stateTopic.empty()) {
            (void)mosquitto_subscribe(mosq, nullptr, stateTopic.c_str(), 1);
        }
        publishDue();
        return;
    case Event::Kind::Disconnected:
        if (e.connection == connection && mosq != nullptr) {
            failed(fmt::format("connection lost: {}", mosquitto_strerror(e.rc)));
        }
        return;
    case Event::Kind::Message:
        if (e.connection != connection || !connected) {
            return;
        }
        if (e.topic == ncmdTopic) {
            command(e.data);
        } else if (e.topic == stateTopic) {
            state(e.data);
        }
        return;
    case Event::Kind::Changed: {
        --changesQueued;
        if (e.epoch != epoch) {
            return;
        }
        rapidjson::Document doc;
        if (!doc.Parse(e.data.c_str(), e.data.size()).HasParseError() && doc.IsObject() && doc.HasMember("values")) {
            std::vector<std::size_t> changed;
            metrics.take(doc["values"], changed);
            if (everBorn && !(connected && (stateTopic.empty() || hostOnline))) {
                keep(changed);
            }
        }
        publishDue();
        return;
    }
    case Event::Kind::Reloaded:
        // A new metric set: born again (same session, same bdSeq) once its values are in.
        loadMetrics();
        born = false;
        return;
    case Event::Kind::Log: log(e.rc != 0, e.data); return;
    case Event::Kind::Stop: return;
    }
}

void SparkplugNode::Impl::run() {
    ControlServer::Call call;
    call.caller = caller();
    call.role = Role::Viewer;
    call.method = "events.subscribe";
    call.params.Parse(R"({"types":["reload_applied"]})");
    ControlServer::Stream stream;
    stream.answer = [](const MethodAnswer&) {};
    stream.notification = [this](std::string_view method, const std::string&) {
        if (method == "event") {
            push(Event{Event::Kind::Reloaded, 0, 0, {}, {}, 0});
        }
    };
    stream.backlogged = [] { return false; };
    eventStream = control.openStream(std::move(call), std::move(stream));
    loadMetrics();
    connect();
    for (;;) {
        std::unique_lock lock(mutex);
        std::optional<Clock::time_point> until = connectDeadline;
        if (retryAt && (!until || *retryAt < *until)) {
            until = retryAt;
        }
        if (until) {
            cv.wait_until(lock, *until, [this] { return !events.empty(); });
        } else {
            cv.wait(lock, [this] { return !events.empty(); });
        }
        if (events.empty()) {
            lock.unlock();
            if (connectDeadline && Clock::now() >= *connectDeadline) {
                failed(fmt::format("not connected within {} s", std::chrono::seconds(kConnectTimeout).count()));
            }
            if (retryAt && Clock::now() >= *retryAt) {
                connect();
            }
            continue;
        }
        Event e = std::move(events.front());
        events.pop_front();
        lock.unlock();
        if (e.kind == Event::Kind::Stop) {
            break;
        }
        handle(e);
    }
    if (born) {
        sendDeath();
    }
    drop();
    closeStreams();
    control.closeStream(eventStream);
}

SparkplugNode::SparkplugNode(SparkplugOptions options, SparkplugSetup setup, ControlServer& control)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(setup), control)) {}

SparkplugNode::~SparkplugNode() {
    stop();
}

bool SparkplugNode::start(std::string& error) {
    if (impl_->options.servers.empty()) {
        error = "sparkplug: no server";
        return false;
    }
    static std::once_flag once;
    std::call_once(once, [] { mosquitto_lib_init(); });
    std::error_code ec;
    fs::create_directories(fs::path(impl_->bdSeqFile).parent_path(), ec);
    if (ec) {
        error = fmt::format("sparkplug: cannot make {}: {}", fs::path(impl_->bdSeqFile).parent_path().string(),
                            ec.message());
        return false;
    }
    // The last session's bdSeq: this start's first session takes the next one.
    std::ifstream in(impl_->bdSeqFile);
    std::uint64_t last = 0;
    if (in >> last && last < 256) {
        impl_->bdSeq = last;
        impl_->savedBdSeq = last;
        impl_->bdSeqUsed = true;
    }
    impl_->thread = std::thread([this] { impl_->run(); });
    return true;
}

void SparkplugNode::stop() {
    if (!impl_->thread.joinable()) {
        return;
    }
    impl_->push(Event{Event::Kind::Stop, 0, 0, {}, {}, 0});
    impl_->thread.join();
}

} // namespace takt::agent
