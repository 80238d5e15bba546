#pragma once
// The inside of the Sparkplug edge node (sparkplug_node.h), shared by its two files:
// sparkplug_node.cpp (the thread, the MQTT sessions, the metric set) and sparkplug_publish.cpp
// (births, data, deaths, historical data, NCMD and STATE). One thread owns every piece of state;
// libmosquitto's network thread and the control service's thread only hand events over to it
// through a queue.
#include <mosquitto.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "sparkplug/sparkplug_metrics.h"
#include "takt/agent/sparkplug_node.h"
#include "takt/agent/value_feed.h"
#include "takt/io/mosquitto_log.h"

namespace takt::agent {

namespace sp = sparkplug;

namespace sparkplug {

using Clock = std::chrono::steady_clock;

// A server that has not accepted the connection within this is given up for the next one.
constexpr auto kConnectTimeout = std::chrono::seconds(5);
// After every server of the list failed in a row, the next round waits this long, doubling.
constexpr auto kFirstRoundDelay = std::chrono::milliseconds(1000);
constexpr auto kMaxRoundDelay = std::chrono::milliseconds(10'000);
// A session the broker ends sooner than this after accepting it is a failed attempt of the round,
// not a working session: a broker that accepts and drops at once (one refusing the session's
// subscription, one dropping oversized packets at the NBIRTH) gets the round's growing delay
// instead of a reconnect storm.
constexpr auto kSteadySession = std::chrono::seconds(5);
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

inline std::uint64_t nowMs() {
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

} // namespace sparkplug

struct SparkplugNode::Impl {
    Impl(SparkplugOptions o, SparkplugSetup s, ControlServer& c)
        : options(std::move(o)), setup(std::move(s)), control(c) {
        base = fmt::format("spBv1.0/{}/", options.groupId);
        ncmdTopic = base + "NCMD/" + options.edgeNodeId;
        stateTopic = options.primaryHostId.empty() ? std::string() : "spBv1.0/STATE/" + options.primaryHostId;
        bdSeqFile = (std::filesystem::path(setup.stateDir) / ".takt" / "sparkplug" / "bdseq").string();
    }

    // --- hand-over, on any thread
    void push(sp::Event e) {
        {
            const std::lock_guard lock(mutex);
            events.push_back(std::move(e));
        }
        cv.notify_one();
    }
    // A warning from a callback of the control service, said on the node's thread.
    void pushLog(std::string line) { push(sp::Event{sp::Event::Kind::Log, 0, 1, {}, std::move(line), 0}); }
    // libmosquitto's callbacks get the Link of their client: which node, which connection. A Link
    // outlives its client's network thread (drop() joins it before the next connect replaces it).
    struct Link {
        Impl* impl = nullptr;
        std::uint64_t connection = 0;
        bool tlsWithoutCertificate = false; // an ssl:// server, no tls.cert (mosquittoFailure)
        bool accepted = false;              // the broker accepted the session (network thread only)
    };
    static void onConnect(mosquitto* /*m*/, void* self, int rc) {
        auto* l = static_cast<Link*>(self);
        l->accepted = l->accepted || rc == 0;
        l->impl->push(sp::Event{sp::Event::Kind::Connected, l->connection, rc, {}, {}, 0});
    }
    static void onDisconnect(mosquitto* /*m*/, void* self, int rc) {
        const auto* l = static_cast<const Link*>(self);
        l->impl->push(sp::Event{sp::Event::Kind::Disconnected,
                                l->connection,
                                rc,
                                {},
                                io::mosquittoFailure(rc, l->tlsWithoutCertificate && !l->accepted),
                                0});
    }
    // What libmosquitto logs of a failure: the reason its return codes leave out (a TLS failure),
    // the first one per connection, said by failed().
    static void onLog(mosquitto* /*m*/, void* self, int level, const char* line) {
        std::optional<std::string> reason = io::mosquittoLogReason(level, line);
        if (!reason) {
            return; // most lines (every packet's DEBUG line): no lock for them
        }
        const auto* l = static_cast<const Link*>(self);
        const std::lock_guard lock(l->impl->loggedMutex);
        if (l->impl->loggedConnection != l->connection || l->impl->loggedReason.empty()) {
            l->impl->loggedConnection = l->connection;
            l->impl->loggedReason = std::move(*reason);
        }
    }
    static void onMessage(mosquitto* /*m*/, void* self, const mosquitto_message* msg) {
        const auto* l = static_cast<const Link*>(self);
        sp::Event e{sp::Event::Kind::Message, l->connection, 0, msg->topic, {}, 0};
        if (msg->payloadlen > 0) {
            e.data.assign(static_cast<const char*>(msg->payload), static_cast<std::size_t>(msg->payloadlen));
        }
        l->impl->push(std::move(e));
    }

    // --- the node's thread
    void run();
    void handle(sp::Event& e);
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
    [[nodiscard]] double deadbandOf(std::string_view path) const;
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
    std::deque<sp::Event> events;
    mutable std::mutex healthMutex;
    SparkplugHealth healthState; // written by the node's thread, read by runtime.status
    void setHealth(const std::function<void(SparkplugHealth&)>& change) {
        const std::lock_guard lock(healthMutex);
        change(healthState);
    }
    std::atomic<std::size_t> changesQueued{0};
    std::thread thread;

    sp::MetricSet metrics;
    std::string programHash; // of the program the metric set was read from; empty: not known
    std::uint64_t epoch = 0;
    std::vector<std::uint64_t> streams;
    std::uint64_t eventStream = 0;

    mosquitto* mosq = nullptr;
    Link link;
    std::uint64_t connection = 0; // numbers the connections
    std::mutex loggedMutex;       // onLog (network thread) to failed() (the node's)
    std::uint64_t loggedConnection = 0;
    std::string loggedReason;
    std::size_t server = 0;
    bool connected = false;
    bool born = false;
    bool hostOnline = false;
    std::uint64_t hostTimestamp = 0;
    std::optional<sp::Clock::time_point> connectDeadline;
    std::optional<sp::Clock::time_point> retryAt;
    std::size_t failuresInRound = 0;
    std::optional<sp::Clock::time_point> connectedAt; // of the current session
    std::chrono::milliseconds roundDelay = sp::kFirstRoundDelay;
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

} // namespace takt::agent
