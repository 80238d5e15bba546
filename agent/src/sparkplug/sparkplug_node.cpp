// The Sparkplug B edge node's thread, its MQTT sessions and its metric set (sparkplug_node.h,
// sparkplug_node_impl.h); what it publishes and takes is sparkplug_publish.cpp.
#include "takt/agent/sparkplug_node.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "control/control_runtime_internal.h"
#include "rpc/rpc_json.h"
#include "sparkplug/sparkplug_node_impl.h"

namespace takt::agent {

namespace fs = std::filesystem;
using sp::Clock;
using sp::Event;
using sp::kCallTimeout;
using sp::kChunk;
using sp::kConnectTimeout;
using sp::kFirstRoundDelay;
using sp::kKeepaliveSeconds;
using sp::kMaxMetrics;
using sp::kMaxRoundDelay;
using sp::nowMs;

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

// The deadband of the metric of `path`: the first [[runtime.sparkplug.deadbands]] entry whose glob
// matches it (as `expose` matches: a structure's glob covers its members), else `deadband`.
double SparkplugNode::Impl::deadbandOf(std::string_view path) const {
    for (const auto& d : options.deadbands) {
        if (exposedBy({d.expose}, path)) {
            return d.absolute;
        }
    }
    return options.deadband;
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
            (void)metrics.addListed(row, deadbandOf(path->value.GetString()));
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
    // The program the set was read from (an online change swaps the hash before its
    // reload_applied event, which is what makes the node read the set again).
    programHash.clear();
    const MethodAnswer status = callSync("runtime.status", "{}");
    rapidjson::Document statusDoc;
    if (status.ok && !statusDoc.Parse(status.json.c_str(), status.json.size()).HasParseError() &&
        statusDoc.IsObject() && statusDoc.HasMember("program_hash") && statusDoc["program_hash"].IsString()) {
        programHash = statusDoc["program_hash"].GetString();
    } else {
        log(true, fmt::format("sparkplug: runtime.status failed, the NBIRTH carries no {}: {}", sp::kProgramHash,
                              status.message));
    }
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
    // One client ID per session: what a broker keeps under the last session's ID (RabbitMQ names
    // the subscription queue after it, and a cluster that lost the queue's node can keep a dead
    // record of it that refuses every later session of that ID) never meets the next session.
    const std::string clientId = fmt::format("takt-{}-{}-{}", options.groupId, options.edgeNodeId, bdSeq);
    setHealth([&](SparkplugHealth& h) {
        h.state = "connecting";
        h.server = s.url;
        h.bdSeq = bdSeq;
    });
    link = Link{this, ++connection, s.tls && options.tlsCert.empty(), false};
    mosq = mosquitto_new(clientId.c_str(), true, &link);
    if (mosq == nullptr) {
        failed("cannot create an MQTT client");
        return;
    }
    mosquitto_connect_callback_set(mosq, &Impl::onConnect);
    mosquitto_disconnect_callback_set(mosq, &Impl::onDisconnect);
    mosquitto_message_callback_set(mosq, &Impl::onMessage);
    mosquitto_log_callback_set(mosq, &Impl::onLog);
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
    payload.metrics.push_back(sp::bdSeqMetric(bdSeq));
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
        failed(io::mosquittoFailure(rc, link.tlsWithoutCertificate));
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
// after a growing delay once every server failed in a row. A session that lasted starts a new
// round; one that ended within kSteadySession is a failure of the round going on.
void SparkplugNode::Impl::failed(const std::string& why) {
    if (connectedAt && Clock::now() - *connectedAt >= sp::kSteadySession) {
        failuresInRound = 0;
        roundDelay = kFirstRoundDelay;
    }
    connectedAt.reset();
    const auto& s = options.servers[server];
    std::string logged;
    {
        const std::lock_guard lock(loggedMutex);
        if (loggedConnection == connection) {
            logged = std::exchange(loggedReason, {});
        }
    }
    const std::string reason = logged.empty() ? why : fmt::format("{} ({})", why, logged);
    setHealth([&](SparkplugHealth& h) {
        h.state = "connecting";
        h.reason = reason;
    });
    log(true, fmt::format("sparkplug: {}: {}", s.url, reason));
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
        connectedAt = Clock::now();
        log(false, fmt::format("sparkplug: connected to {} (bdSeq {})", options.servers[server].url, bdSeq));
        setHealth([&](SparkplugHealth& h) { h.state = stateTopic.empty() ? "connecting" : "waiting_for_host"; });
        (void)mosquitto_subscribe(mosq, nullptr, ncmdTopic.c_str(), 1);
        if (!stateTopic.empty()) {
            (void)mosquitto_subscribe(mosq, nullptr, stateTopic.c_str(), 1);
        }
        publishDue();
        return;
    case Event::Kind::Disconnected:
        if (e.connection == connection && mosq != nullptr) {
            failed(fmt::format("connection lost: {}", e.data));
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
    setHealth([](SparkplugHealth& h) { h.state = "stopped"; });
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

SparkplugHealth SparkplugNode::health() const {
    const std::lock_guard lock(impl_->healthMutex);
    return impl_->healthState;
}

void SparkplugNode::stop() {
    if (!impl_->thread.joinable()) {
        return;
    }
    impl_->push(Event{Event::Kind::Stop, 0, 0, {}, {}, 0});
    impl_->thread.join();
}

} // namespace takt::agent
