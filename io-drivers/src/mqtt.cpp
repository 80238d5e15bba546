// The mqtt driver (CONFIG.md "io.toml"), on libmosquitto.
//
// Params: broker = "host:port" ("127.0.0.1:1883"), client_id ("takt-<pid>"), username/password,
// tls = {ca, cert, key} (cert and key together), qos (0..2, 1), keepalive_s (30; truST's
// keep_alive_s is the same key), allow_insecure_remote (truST: false refuses a broker other than
// loopback without tls; takt's default true allows it),
// reconnect_ms / reconnect_max_ms (1000 / 30000; libmosquitto counts whole seconds, so they
// are rounded up), status_topic (retained "online" once connected, "offline" as the last will
// and on stop), on_error (fault|warn|ignore, fault), comm_loss_timeout_ms (5000), and:
//   topic_in / topic_out: the truST whole-image topics. A topic_in message's payload bytes
//     are written to %IB0.. (in_bytes, 64) at the next cycle start, only those bytes and only
//     once: between messages the inputs keep what the program or another driver left there,
//     which lets a modbus-tcp input_start share them (sharedWholeImage); %QB0.. (out_bytes, 64)
//     are published raw on topic_out whenever they change.
//   publish = [{address, type, topic, retain = false}]: a typed JSON value
//     ({"type":"INT","value":42}) published when the value at `address` changes (and again
//     after every reconnect).
//   subscribe = [{topic, address, type}]: typed JSON (or a bare number/boolean) written to
//     `address` at the next cycle start.
// Threads: libmosquitto's own network thread (mosquitto_loop_start: non-blocking connect and
// reconnect with exponential back-off) receives messages; a publisher thread turns the outputs
// the scan thread left in the double buffer into publishes. The scan thread only copies bytes.
// Communication loss: while disconnected health is degraded (faulted under on_error = fault);
// after comm_loss_timeout_ms the subscribed inputs are marked bad: they read as 0 until a new
// message arrives.
#include <mosquitto.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "driver_support.h"
#include "mqtt_payload.h"
#include "registry.h"
#include "wakeup.h"

namespace takt::io {
namespace {

using namespace detail;

struct Binding {
    std::string topic;
    ImageAddress address;
    ValueType type;
    bool retain = false;
    std::size_t offset = 0; // into the flat value buffer (8 bytes per binding)
};

class Mqtt final : public Driver {
public:
    Mqtt() {
        static std::once_flag once;
        std::call_once(once, [] { mosquitto_lib_init(); });
    }
    ~Mqtt() override { stop(); }

    std::string_view name() const noexcept override { return "mqtt"; }

    bool init(const DriverSpec& spec, std::string& error) override {
        ParamReader p(spec.params, spec.source.keyPrefix, error);
        static constexpr std::string_view kKnown[] = {"broker",
                                                      "client_id",
                                                      "topic_in",
                                                      "topic_out",
                                                      "in_bytes",
                                                      "out_bytes",
                                                      "username",
                                                      "password",
                                                      "tls",
                                                      "qos",
                                                      "keepalive_s",
                                                      "keep_alive_s",
                                                      "allow_insecure_remote",
                                                      "reconnect_ms",
                                                      "reconnect_max_ms",
                                                      "status_topic",
                                                      "on_error",
                                                      "comm_loss_timeout_ms",
                                                      "publish",
                                                      "subscribe"};
        if (!p.onlyKeys(kKnown, "the mqtt driver")) {
            return false;
        }
        const std::string broker = p.string("broker").value_or("127.0.0.1:1883");
        if (std::string why; p.ok() && !parseHostPort(broker, 1883, broker_, why)) {
            p.fail("broker", why);
        }
        clientId_ = p.string("client_id").value_or(fmt::format("takt-{}", ::getpid()));
        topicIn_ = p.string("topic_in").value_or("");
        topicOut_ = p.string("topic_out").value_or("");
        inBytes_ = static_cast<std::size_t>(p.integer("in_bytes", 1, 65536).value_or(64));
        outBytes_ = static_cast<std::size_t>(p.integer("out_bytes", 1, 65536).value_or(64));
        username_ = p.string("username").value_or("");
        password_ = p.string("password").value_or("");
        if (p.ok() && p.has("password") && !p.has("username")) {
            p.fail("password", "needs `username`");
        }
        qos_ = static_cast<int>(p.integer("qos", 0, 2).value_or(1));
        if (p.has("keepalive_s") && p.has("keep_alive_s")) {
            p.fail("keep_alive_s", "truST's name for keepalive_s: give one of them");
        }
        keepalive_ =
            static_cast<int>(p.integer(p.has("keep_alive_s") ? "keep_alive_s" : "keepalive_s", 5, 3600).value_or(30));
        reconnectMs_ = p.integer("reconnect_ms", 1, 600000).value_or(1000);
        reconnectMaxMs_ = p.integer("reconnect_max_ms", 1, 3600000).value_or(30000);
        statusTopic_ = p.string("status_topic").value_or("");
        commLossMs_ = p.integer("comm_loss_timeout_ms", 0, 3'600'000).value_or(5000);
        if (!parseOnError(p, onError_) || !readTls(p) || !readBindings(p, spec.byteAddressing)) {
            return false;
        }
        const std::string_view host = broker_.host;
        const bool loopback = host == "127.0.0.1" || host == "localhost" || host == "::1" || host.starts_with("127.");
        if (!p.boolean("allow_insecure_remote").value_or(true) && !loopback && tlsCa_.empty()) {
            return p.fail("allow_insecure_remote",
                          fmt::format("false refuses broker '{}' without tls: it is not loopback, so give tls = "
                                      "{{ca = \"…\"}} or set allow_insecure_remote = true",
                                      broker));
        }
        for (std::string_view key : {"topic_in", "topic_out", "status_topic", "client_id"}) {
            if (p.has(key) && p.string(key).value_or("").empty()) {
                return p.fail(key, "must not be empty");
            }
        }
        if (!p.ok()) {
            return false;
        }
        // Whole-image ranges must not overlap per-variable ones.
        std::vector<BitExtent> in;
        if (!topicIn_.empty()) {
            in.push_back({Area::Input, 0, inBytes_ * 8});
        }
        for (std::size_t i = 0; i < subscribe_.size(); ++i) {
            const BitExtent e = extent(subscribe_[i]);
            if (findOverlap(in, e) >= 0) {
                return p.fail(fmt::format("subscribe[{}].address", i), "overlaps topic_in's bytes or another entry");
            }
            in.push_back(e);
        }
        inShared_.assign(subscribe_.size() * 8, 0);
        outShared_.assign(publish_.size() * 8, 0);
        outSent_.assign(publish_.size() * 8, 0);
        outNow_.assign(publish_.size() * 8, 0);
        imageIn_.assign(topicIn_.empty() ? 0 : inBytes_, 0);
        imageOut_.assign(topicOut_.empty() ? 0 : outBytes_, 0);
        imageOutSent_ = imageOut_;
        imageOutNow_ = imageOut_;
        return true;
    }

    // What it receives (topic_in, subscribe) writes the image; what it publishes (topic_out,
    // publish) only reads it, so telemetry of outputs another driver drives never clashes.
    std::vector<ByteRange> ownedRanges() const override {
        std::vector<BitExtent> written;
        std::vector<BitExtent> read;

        if (!topicOut_.empty()) {
            read.push_back({Area::Output, 0, outBytes_ * 8});
        }
        for (const Binding& b : subscribe_) {
            written.push_back(extent(b));
        }
        for (const Binding& b : publish_) {
            read.push_back(extent(b));
        }
        std::vector<ByteRange> r = byteRanges(written, Access::Write);
        if (!topicIn_.empty() && inBytes_ > 0) {
            r.push_back({Area::Input, 0, static_cast<std::uint32_t>(inBytes_), Access::Write, true});
        }
        const std::vector<ByteRange> readRanges = byteRanges(read, Access::Read);
        r.insert(r.end(), readRanges.begin(), readRanges.end());
        return r;
    }

    bool start(std::string& error) override {
        mosq_ = mosquitto_new(clientId_.c_str(), true, this);
        if (mosq_ == nullptr) {
            error = fmt::format("mqtt: cannot create a client: {}", std::strerror(errno));
            return false;
        }
        mosquitto_connect_callback_set(mosq_, &Mqtt::onConnect);
        mosquitto_disconnect_callback_set(mosq_, &Mqtt::onDisconnect);
        mosquitto_message_callback_set(mosq_, &Mqtt::onMessage);
        const auto secs = [](std::int64_t ms) { return static_cast<unsigned>((ms + 999) / 1000); };
        mosquitto_reconnect_delay_set(mosq_, secs(reconnectMs_), secs(reconnectMaxMs_), true);
        int rc = MOSQ_ERR_SUCCESS;
        if (!username_.empty()) {
            rc = mosquitto_username_pw_set(mosq_, username_.c_str(), password_.empty() ? nullptr : password_.c_str());
        }
        if (rc == MOSQ_ERR_SUCCESS && !tlsCa_.empty()) {
            rc = mosquitto_tls_set(mosq_, tlsCa_.c_str(), nullptr, tlsCert_.empty() ? nullptr : tlsCert_.c_str(),
                                   tlsKey_.empty() ? nullptr : tlsKey_.c_str(), nullptr);
        }
        if (rc == MOSQ_ERR_SUCCESS && !statusTopic_.empty()) {
            rc = mosquitto_will_set(mosq_, statusTopic_.c_str(), 7, "offline", qos_, true);
        }
        if (rc != MOSQ_ERR_SUCCESS) {
            error = fmt::format("mqtt: {}", mosquitto_strerror(rc));
            stop();
            return false;
        }
        {
            const std::lock_guard lock(mutex_);
            stopping_ = false;
            disconnectedSinceNs_ = monotonicNs();
        }
        health_.set(Health::Degraded, fmt::format("connecting to {}:{}", broker_.host, broker_.port),
                    IoError::Connecting);
        // A broker that is not up yet is not an error: the network thread keeps retrying.
        mosquitto_connect_async(mosq_, broker_.host.c_str(), broker_.port, keepalive_);
        rc = mosquitto_loop_start(mosq_);
        if (rc != MOSQ_ERR_SUCCESS) {
            error = fmt::format("mqtt: cannot start the network thread: {}", mosquitto_strerror(rc));
            stop();
            return false;
        }
        publisher_ = std::thread([this] { publishLoop(); });
        return true;
    }

    void readInputs(ImageView image) noexcept override {
        const std::lock_guard lock(mutex_);
        // Bad inputs read as 0 every cycle, as every driver's (imageIn_ was zeroed).
        const std::size_t n = inputsBad_ ? imageIn_.size() : imageInFresh_;
        if (n != 0 && !image.inputs.empty()) {
            std::memcpy(image.inputs.data(), imageIn_.data(), std::min(n, image.inputs.size()));
        }
        imageInFresh_ = 0;
        for (std::size_t i = 0; i < subscribe_.size(); ++i) {
            put(subscribe_[i], inShared_.data() + i * 8, image);
        }
    }

    void writeOutputs(ImageView image) noexcept override {
        {
            const std::lock_guard lock(mutex_);
            if (safeLatched_) {
                return;
            }
            if (!imageOut_.empty() && !image.outputs.empty()) {
                std::memcpy(imageOut_.data(), image.outputs.data(), std::min(imageOut_.size(), image.outputs.size()));
            }
            for (std::size_t i = 0; i < publish_.size(); ++i) {
                get(publish_[i], image, outShared_.data() + i * 8);
            }
            haveOutputs_ = true;
        }
        wake_.notify();
    }

    // Published values follow the safe image from now on (so subscribers see the safe state).
    void applySafeState(std::span<const std::uint8_t> safeOutputs) noexcept override {
        {
            const std::lock_guard lock(mutex_);
            const ImageView view{{}, std::span(const_cast<std::uint8_t*>(safeOutputs.data()), safeOutputs.size()), {}};
            std::fill(imageOut_.begin(), imageOut_.end(), 0);
            if (!imageOut_.empty() && !safeOutputs.empty()) { // no memcpy from or to an empty area
                std::memcpy(imageOut_.data(), safeOutputs.data(), std::min(imageOut_.size(), safeOutputs.size()));
            }
            for (std::size_t i = 0; i < publish_.size(); ++i) {
                std::memset(outShared_.data() + i * 8, 0, 8);
                get(publish_[i], view, outShared_.data() + i * 8);
            }
            safeLatched_ = true;
            haveOutputs_ = true;
        }
        wake_.notify();
    }

    void releaseSafeState() noexcept override {
        const std::lock_guard lock(mutex_);
        safeLatched_ = false;
    }

    HealthStatus health() const override { return health_.get(); }
    bool failsClosed() const noexcept override { return onError_ == OnError::Fault; }

    void stop() noexcept override {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify();
        if (publisher_.joinable()) {
            publisher_.join();
        }
        bool connected = false;
        {
            std::unique_lock lock(mutex_);
            connected = connected_;
            // Whatever the publisher thread managed before it saw the stop, the latched safe
            // values go out now (publishChanges sends only what differs from what was sent).
            if (mosq_ != nullptr && safeLatched_ && connected_ && haveOutputs_) {
                publishChanges(lock);
            }
        }
        if (mosq_ != nullptr && connected) {
            // QoS 0 publishes wait in the client's queue for its network thread: let them leave
            // before the disconnect (bounded, so a dead broker cannot hold the stop up).
            for (int i = 0; i < 500 && mosquitto_want_write(mosq_); ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        if (mosq_ != nullptr) {
            if (connected && !statusTopic_.empty()) {
                // A clean disconnect suppresses the will, so say "offline" ourselves.
                mosquitto_publish(mosq_, nullptr, statusTopic_.c_str(), 7, "offline", qos_, true);
            }
            mosquitto_disconnect(mosq_);
            mosquitto_loop_stop(mosq_, false);
            mosquitto_destroy(mosq_);
            mosq_ = nullptr;
        }
    }

private:
    static BitExtent extent(const Binding& b) {
        const std::uint64_t first = b.address.bitPosition();
        return {b.address.area, first, first + (b.address.isBit() ? 1 : std::uint64_t{b.type.size} * 8)};
    }

    static void put(const Binding& b, const std::uint8_t* value, const ImageView& image) {
        const std::span<std::uint8_t> area = areaSpan(image, b.address.area);
        if (b.address.isBit()) {
            setBit(area, b.address.bitPosition(), value[0] != 0);
        } else if (b.address.byteOffset + b.type.size <= area.size()) {
            std::memcpy(area.data() + b.address.byteOffset, value, b.type.size);
        }
    }

    static void get(const Binding& b, const ImageView& image, std::uint8_t* value) {
        const std::span<std::uint8_t> area = areaSpan(image, b.address.area);
        if (b.address.isBit()) {
            value[0] = getBit(area, b.address.bitPosition()) ? 1 : 0;
        } else if (b.address.byteOffset + b.type.size <= area.size()) {
            std::memcpy(value, area.data() + b.address.byteOffset, b.type.size);
        }
    }

    bool readTls(ParamReader& p) {
        const toml::table* tls = p.table("tls");
        if (tls == nullptr) {
            return p.ok();
        }
        std::string sub;
        ParamReader r(*tls, p.keyPath("tls"), sub);
        static constexpr std::string_view kTls[] = {"ca", "cert", "key"};
        if (r.onlyKeys(kTls, "the mqtt tls table")) {
            tlsCa_ = r.string("ca", true).value_or("");
            tlsCert_ = r.string("cert").value_or("");
            tlsKey_ = r.string("key").value_or("");
        }
        if (r.ok() && tlsCert_.empty() != tlsKey_.empty()) {
            r.fail(tlsCert_.empty() ? "cert" : "key", "`cert` and `key` go together");
        }
        for (const auto& [key, path] : {std::pair{"ca", &tlsCa_}, {"cert", &tlsCert_}, {"key", &tlsKey_}}) {
            std::error_code ec;
            if (r.ok() && !path->empty() && !std::filesystem::is_regular_file(*path, ec)) {
                r.fail(key, fmt::format("'{}' is not a readable file", *path));
            }
        }
        return r.ok() || p.adopt(sub);
    }

    bool readBindings(ParamReader& p, bool byteAddressing) {
        for (const bool isPublish : {true, false}) {
            const std::string_view key = isPublish ? "publish" : "subscribe";
            const toml::array* list = p.tableArray(key);
            for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
                std::string sub;
                ParamReader r(*(*list)[i].as_table(), elementPrefix(p, key, i), sub);
                static constexpr std::string_view kPub[] = {"address", "type", "topic", "retain"};
                static constexpr std::string_view kSub[] = {"address", "type", "topic"};
                Binding b;
                const std::span<const std::string_view> known =
                    isPublish ? std::span<const std::string_view>(kPub) : std::span<const std::string_view>(kSub);
                if (r.onlyKeys(known, fmt::format("an mqtt {} entry", key))) {
                    b.topic = r.string("topic", true).value_or("");
                    const auto address = r.string("address", true);
                    const auto type = r.string("type", true);
                    b.retain = isPublish && r.boolean("retain").value_or(false);
                    std::string why;
                    if (!r.ok()) {
                    } else if (b.topic.empty()) {
                        r.fail("topic", "must not be empty");
                    } else if (!parseValueType(*type, b.type)) {
                        r.fail("type", fmt::format("'{}' is not an elementary type a direct address can hold", *type));
                    } else if (!parseImageAddress(*address, byteAddressing, b.address, why)) {
                        r.fail("address", why);
                    } else if (isPublish ? false : b.address.area == Area::Output) {
                        r.fail("address", "subscribed values go to %I or %M");
                    } else if ((b.type.kind == bytecode::ValueKind::Bool) != b.address.isBit() ||
                               (!b.address.isBit() && b.address.size != b.type.size)) {
                        r.fail("address", fmt::format("'{}' does not hold a {} ({} needs a {})", *address, *type, *type,
                                                      b.type.kind == bytecode::ValueKind::Bool ? "%X bit"
                                                      : b.type.size == 1                       ? "%B byte"
                                                      : b.type.size == 2                       ? "%W word"
                                                      : b.type.size == 4                       ? "%D double word"
                                                                                               : "%L long word"));
                    }
                }
                if (!r.ok()) {
                    return p.adopt(sub);
                }
                (isPublish ? publish_ : subscribe_).push_back(b);
            }
        }
        return p.ok();
    }

    // Network thread (libmosquitto callbacks) ---------------------------------------------
    static void onConnect(mosquitto* m, void* self, int rc) {
        auto* d = static_cast<Mqtt*>(self);
        if (rc != 0) {
            d->lost(fmt::format("broker refused the connection: {}", mosquitto_connack_string(rc)));
            return;
        }
        if (!d->topicIn_.empty()) {
            mosquitto_subscribe(m, nullptr, d->topicIn_.c_str(), d->qos_);
        }
        for (const Binding& b : d->subscribe_) {
            mosquitto_subscribe(m, nullptr, b.topic.c_str(), d->qos_);
        }
        if (!d->statusTopic_.empty()) {
            mosquitto_publish(m, nullptr, d->statusTopic_.c_str(), 6, "online", d->qos_, true);
        }
        {
            const std::lock_guard lock(d->mutex_);
            d->connected_ = true;
            d->republish_ = true;
            d->inputsBad_ = false;
        }
        d->wake_.notify();
        d->health_.set(Health::Ok, {});
    }

    static void onDisconnect(mosquitto* /*m*/, void* self, int rc) {
        auto* d = static_cast<Mqtt*>(self);
        d->lost(rc == 0 ? std::string("disconnected") : fmt::format("connection lost: {}", mosquitto_strerror(rc)));
    }

    void lost(const std::string& why) {
        {
            const std::lock_guard lock(mutex_);
            if (connected_ || disconnectedSinceNs_ == 0) {
                disconnectedSinceNs_ = monotonicNs();
            }
            connected_ = false;
            lastError_ = why;
        }
        if (onError_ == OnError::Fault) {
            health_.set(Health::Faulted, why, IoError::ConnectionLost);
        } else if (onError_ == OnError::Warn) {
            health_.set(Health::Degraded, why, IoError::ConnectionLost);
        }
    }

    static void onMessage(mosquitto* /*m*/, void* self, const mosquitto_message* msg) {
        auto* d = static_cast<Mqtt*>(self);
        const std::string_view topic = msg->topic;
        const std::string_view payload(static_cast<const char*>(msg->payload),
                                       msg->payloadlen > 0 ? static_cast<std::size_t>(msg->payloadlen) : 0);
        if (topic == d->topicIn_) {
            const std::lock_guard lock(d->mutex_);
            const std::size_t n = std::min(payload.size(), d->imageIn_.size());
            std::memcpy(d->imageIn_.data(), payload.data(), n);
            // Two messages in one cycle: the held image has the newest of each byte either carried.
            d->imageInFresh_ = std::max(d->imageInFresh_, n);
        }
        for (std::size_t i = 0; i < d->subscribe_.size(); ++i) {
            const Binding& b = d->subscribe_[i];
            if (b.topic != topic) {
                continue;
            }
            std::uint8_t value[8] = {};
            std::string why;
            if (!decodePayload(payload, b.type, value, why)) {
                if (d->onError_ != OnError::Ignore) {
                    d->health_.set(Health::Degraded, fmt::format("topic '{}': bad payload: {}", b.topic, why));
                }
                continue;
            }
            const std::lock_guard lock(d->mutex_);
            std::memcpy(d->inShared_.data() + i * 8, value, 8);
        }
    }

    // Publisher thread ----------------------------------------------------------------------
    void publishLoop() {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            wake_.waitFor(lock, std::chrono::milliseconds(50));
            if (stopping_) {
                break;
            }
            checkCommLoss(lock);
            if (!connected_ || !haveOutputs_) {
                continue;
            }
            publishChanges(lock);
        }
        // The runtime latches the safe state right before it stops the drivers (SIGTERM, --for,
        // a halt): the stop can win the race against the pass that was woken to publish it, so
        // the safe values go out here rather than leaving subscribers with the program's values.
        if (safeLatched_ && connected_ && haveOutputs_) {
            publishChanges(lock);
        }
    }

    // Publishes what changed since the last pass (everything after a reconnect). Called and
    // returns with `lock` held; releases it while publishing.
    void publishChanges(std::unique_lock<PiMutex>& lock) {
        const bool all = republish_;
        republish_ = false;
        outNow_ = outShared_; // same sizes: no allocation
        imageOutNow_ = imageOut_;
        lock.unlock();
        for (std::size_t i = 0; i < publish_.size(); ++i) {
            std::uint8_t* now = outNow_.data() + i * 8;
            std::uint8_t* sent = outSent_.data() + i * 8;
            if (all || !sentOnce_ || std::memcmp(now, sent, 8) != 0) {
                const std::string payload = encodePayload(publish_[i].type, now);
                mosquitto_publish(mosq_, nullptr, publish_[i].topic.c_str(), static_cast<int>(payload.size()),
                                  payload.data(), qos_, publish_[i].retain);
                std::memcpy(sent, now, 8);
            }
        }
        if (!topicOut_.empty() && (all || !sentOnce_ || imageOutNow_ != imageOutSent_)) {
            mosquitto_publish(mosq_, nullptr, topicOut_.c_str(), static_cast<int>(imageOutNow_.size()),
                              imageOutNow_.data(), qos_, false);
            imageOutSent_ = imageOutNow_;
        }
        sentOnce_ = true;
        lock.lock();
    }

    void checkCommLoss(std::unique_lock<PiMutex>& lock) {
        if (connected_ || inputsBad_ || monotonicNs() - disconnectedSinceNs_ < commLossMs_ * 1'000'000) {
            return;
        }
        std::fill(inShared_.begin(), inShared_.end(), 0);
        std::fill(imageIn_.begin(), imageIn_.end(), 0);
        inputsBad_ = true;
        const std::string reason = fmt::format(
            "broker unreachable for over {} ms ({}); subscribed inputs bad (read as 0)", commLossMs_, lastError_);
        lock.unlock();
        health_.set(onError_ == OnError::Fault ? Health::Faulted : Health::Degraded, reason, IoError::CommLost, true);
        lock.lock();
    }

    // Config
    HostPort broker_;
    std::string clientId_, topicIn_, topicOut_, username_, password_, statusTopic_, tlsCa_, tlsCert_, tlsKey_;
    std::size_t inBytes_ = 64, outBytes_ = 64;
    int qos_ = 1, keepalive_ = 30;
    std::int64_t reconnectMs_ = 1000, reconnectMaxMs_ = 30000, commLossMs_ = 5000;
    OnError onError_ = OnError::Warn; // CODESYS: a bus error does not stop the PLC
    std::vector<Binding> publish_, subscribe_;

    // Shared under mutex_ (the scan thread only copies bytes under it).
    mutable PiMutex mutex_; // the scan thread's (pi_mutex.h)
    Wakeup wake_;           // notified by the scan thread after every cycle: no lock (wakeup.h)
    std::vector<std::uint8_t> inShared_, outShared_, imageIn_, imageOut_;
    bool haveOutputs_ = false, safeLatched_ = false, stopping_ = false, connected_ = false, republish_ = false;
    bool inputsBad_ = false;
    std::size_t imageInFresh_ = 0; // topic_in bytes received since the last cycle start
    std::int64_t disconnectedSinceNs_ = 0;
    std::string lastError_;

    // Publisher thread only.
    std::vector<std::uint8_t> outNow_, outSent_, imageOutNow_, imageOutSent_;
    bool sentOnce_ = false;

    mosquitto* mosq_ = nullptr;
    std::thread publisher_;
    HealthCell health_;
};

} // namespace

std::unique_ptr<Driver> detail::makeMqtt() {
    return std::make_unique<Mqtt>();
}

} // namespace takt::io
