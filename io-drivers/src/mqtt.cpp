// The mqtt driver (CONFIG.md "io.toml"), on libmosquitto.
//
// Params: broker = "host:port" ("127.0.0.1:1883"), client_id ("takt-<pid>"), username/password,
// tls = {ca, cert, key} (cert and key together), qos (0..2, 1), keepalive_s (30; truST's
// keep_alive_s is the same key), allow_insecure_remote (truST: false refuses a broker other than
// loopback without tls; takt's default true allows it),
// reconnect_ms / reconnect_max_ms (1000 / 30000: the first delay, doubling up to the second),
// status_topic (retained "online" once connected, "offline" as the last will
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
// Threads: a network thread runs libmosquitto's loop (networkLoop: non-blocking connect and
// reconnect with exponential back-off) and receives messages; a publisher thread turns the outputs
// the scan thread left in the exchange into publishes. The two share a lock of their own; the
// scan thread takes none and only copies bytes through triple buffers (scan_exchange.h).
// Communication loss: while disconnected health is degraded (faulted under on_error = fault);
// after comm_loss_timeout_ms the subscribed inputs are marked bad: they read as 0 until a new
// message arrives.
#include <mosquitto.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "driver_support.h"
#include "mqtt_payload.h"
#include "registry.h"
#include "takt/io/mosquitto_log.h"
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
        outSent_.assign(publish_.size() * 8, 0);
        outNow_.assign(publish_.size() * 8, 0);
        imageIn_.assign(topicIn_.empty() ? 0 : inBytes_, 0);
        imageInSeq_.assign(imageIn_.size(), 0);
        imageOutSent_.assign(topicOut_.empty() ? 0 : outBytes_, 0);
        imageOutNow_ = imageOutSent_;
        in_.resize(kInHeader + imageIn_.size() * (1 + sizeof(std::uint64_t)) + inShared_.size());
        // The safe values in the same layout as the outputs (setSafeImage).
        out_.resize(imageOutNow_.size() + outNow_.size(), imageOutNow_.size() + outNow_.size());
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
        mosquitto_publish_callback_set(mosq_, &Mqtt::onPublish);
        mosquitto_message_callback_set(mosq_, &Mqtt::onMessage);
        mosquitto_log_callback_set(mosq_, &Mqtt::onLog);
        // Publishes come from the publisher thread while the network thread runs the loop.
        mosquitto_threaded_set(mosq_, true);
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
            publishInputs(); // nothing received yet: zeros, not bad
        }
        health_.set(Health::Degraded, fmt::format("connecting to {}:{}", broker_.host, broker_.port),
                    IoError::Connecting);
        // A broker that is not up yet is not an error: the network thread keeps retrying.
        mosquitto_connect_async(mosq_, broker_.host.c_str(), broker_.port, keepalive_);
        networkStop_ = false;
        network_ = std::thread([this] { networkLoop(); });
        publisher_ = std::thread([this] { publishLoop(); });
        return true;
    }

    // The newest received values, and whether they are bad, from one slot (publishInputs).
    void readInputs(ImageView image) noexcept override {
        if (in_.size() == 0) {
            return; // not initialised
        }
        in_.refresh();
        const std::uint8_t* slot = in_.front();
        std::uint64_t seq = 0;
        std::memcpy(&seq, slot, sizeof(seq));
        const bool bad = slot[sizeof(seq)] != 0;
        inBad_ = bad;
        const std::uint8_t* held = slot + kInHeader;
        const std::uint8_t* heldSeq = held + imageIn_.size();
        const std::uint8_t* values = heldSeq + imageIn_.size() * sizeof(std::uint64_t);
        const std::size_t n = std::min(imageIn_.size(), image.inputs.size());
        if (bad) {
            // Bad inputs read as 0 every cycle, as every driver's (the slot holds zeros).
            copyBytes(image.inputs.data(), held, n);
        } else if (seq != seenSeq_) {
            // Only the topic_in bytes a message carried since the last cycle start, once.
            for (std::size_t j = 0; j < n; ++j) {
                std::uint64_t byteSeq = 0;
                std::memcpy(&byteSeq, heldSeq + j * sizeof(byteSeq), sizeof(byteSeq));
                if (byteSeq > seenSeq_) {
                    image.inputs[j] = held[j];
                }
            }
        }
        seenSeq_ = seq;
        for (std::size_t i = 0; i < subscribe_.size(); ++i) {
            put(subscribe_[i], values + i * 8, image);
        }
    }

    void writeOutputs(ImageView image) noexcept override {
        if (!out_.accepting()) {
            return;
        }
        fillOutputs(image, out_.back());
        out_.publish();
        wake_.notify();
    }

    // Converted once here to what the publisher sends (publish values from %M or %I stay zero).
    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override {
        std::vector<std::uint8_t> outputs(safeOutputs.begin(), safeOutputs.end());
        std::vector<std::uint8_t> safe(out_.safeBytes(), 0);
        fillOutputs(ImageView{{}, outputs, {}}, safe.data());
        out_.setSafe(safe);
    }

    // Published values follow the safe image from now on (so subscribers see the safe state).
    void applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept override {
        out_.latchSafe();
        wake_.notify();
    }

    void releaseSafeState() noexcept override { out_.release(); }

    HealthStatus health() const override { return health_.get(); }
    std::optional<bool> inputsBadThisCycle() const noexcept override { return inBad_; }
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
            if (mosq_ != nullptr && out_.latched() && connected_) {
                publishChanges(lock);
            }
        }
        if (mosq_ != nullptr && connected) {
            // The safe values must have reached the broker before the connection closes: a
            // close with the broker's answers still unread resets the connection, and a broker
            // that sees the reset before it read our last publishes drops them. So wait until
            // every publish is acknowledged (written, at QoS 0), bounded so that a dead broker
            // cannot hold the stop up.
            waitUntilAcknowledged();
            if (!statusTopic_.empty()) {
                // A clean disconnect suppresses the will, so say "offline" ourselves.
                send(statusTopic_, "offline", true);
                waitUntilAcknowledged();
            }
        }
        if (mosq_ != nullptr) {
            networkStop_ = true; // the network thread disconnects
            if (network_.joinable()) {
                network_.join();
            } else {
                mosquitto_disconnect(mosq_);
            }
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

    // What goes out for `image` (the program's %Q and %M, or the safe %Q image) into an output
    // slot: %QB0.. for topic_out, then 8 bytes per publish binding.
    void fillOutputs(const ImageView& image, std::uint8_t* slot) const noexcept {
        const std::size_t n = std::min(imageOutNow_.size(), image.outputs.size());
        copyBytes(slot, image.outputs.data(), n);
        if (imageOutNow_.size() > n) {
            std::memset(slot + n, 0, imageOutNow_.size() - n);
        }
        std::uint8_t* values = slot + imageOutNow_.size();
        for (std::size_t i = 0; i < publish_.size(); ++i) {
            std::memset(values + i * 8, 0, 8);
            get(publish_[i], image, values + i * 8);
        }
    }

    // Under mutex_, by whichever driver thread changed the received values: hands them, and
    // whether they are bad, to the scan thread in one slot: [seq][bad] | topic_in bytes | per
    // byte the seq of the message that last carried it | 8 bytes per subscribe binding.
    void publishInputs() noexcept {
        std::uint8_t* slot = in_.back();
        std::memcpy(slot, &imageSeq_, sizeof(imageSeq_));
        std::memset(slot + sizeof(imageSeq_), inputsBad_ ? 1 : 0, kInHeader - sizeof(imageSeq_));
        std::uint8_t* held = slot + kInHeader;
        if (!imageIn_.empty()) {
            std::memcpy(held, imageIn_.data(), imageIn_.size());
            std::memcpy(held + imageIn_.size(), imageInSeq_.data(), imageInSeq_.size() * sizeof(std::uint64_t));
        }
        if (!inShared_.empty()) {
            std::memcpy(held + imageIn_.size() * (1 + sizeof(std::uint64_t)), inShared_.data(), inShared_.size());
        }
        in_.publish();
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
            d->send(d->statusTopic_, "online", true);
        }
        {
            const std::lock_guard lock(d->mutex_);
            d->connected_ = true;
            d->everConnected_ = true;
            d->loggedReason_.clear();
            d->republish_ = true;
            // Bad inputs stay bad until a message brings the peer's values again (onMessage);
            // a driver that receives nothing has no inputs to wait for.
            if (d->inputsBad_ && d->topicIn_.empty() && d->subscribe_.empty()) {
                d->inputsBad_ = false;
                d->publishInputs();
            }
        }
        d->wake_.notify();
        d->health_.set(Health::Ok, {});
    }

    // Every publish goes through here, so that stop() knows when the broker has them all.
    void send(const std::string& topic, std::string_view payload, bool retain) noexcept {
        unacknowledged_.fetch_add(1, std::memory_order_acq_rel); // before: the answer can come first
        if (mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()), payload.data(), qos_,
                              retain) != MOSQ_ERR_SUCCESS) {
            unacknowledged_.fetch_sub(1, std::memory_order_acq_rel); // no answer will come
        }
    }

    // libmosquitto calls it once per publish: when written at QoS 0, on PUBACK/PUBCOMP above.
    static void onPublish(mosquitto* /*m*/, void* self, int /*mid*/) {
        static_cast<Mqtt*>(self)->unacknowledged_.fetch_sub(1, std::memory_order_acq_rel);
    }

    // Up to 500 ms: a lost connection leaves publishes unanswered until it comes back.
    void waitUntilAcknowledged() const noexcept {
        for (int i = 0; i < 500 && unacknowledged_.load(std::memory_order_acquire) > 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    // A connection that fails before it is up (a TLS handshake) says why only in libmosquitto's
    // log: kept for lost() to say, and said while the driver has never been connected (health is
    // then "connecting to …", whatever on_error says).
    static void onLog(mosquitto* /*m*/, void* self, int level, const char* line) {
        std::optional<std::string> reason = mosquittoLogReason(level, line);
        if (!reason) {
            return;
        }
        auto* d = static_cast<Mqtt*>(self);
        bool first = false;
        {
            const std::lock_guard lock(d->mutex_);
            if (d->connected_ || !d->loggedReason_.empty()) {
                return;
            }
            d->loggedReason_ = *reason;
            first = !d->everConnected_;
        }
        if (first && d->health_.get().code == IoError::Connecting) {
            d->health_.set(Health::Degraded,
                           fmt::format("connecting to {}:{}: {}", d->broker_.host, d->broker_.port, *reason),
                           IoError::Connecting);
        }
    }

    static void onDisconnect(mosquitto* /*m*/, void* self, int rc) {
        auto* d = static_cast<Mqtt*>(self);
        bool neverAccepted = false;
        {
            const std::lock_guard lock(d->mutex_);
            neverAccepted = !d->everConnected_;
        }
        d->lost(rc == 0 ? std::string("disconnected")
                        : fmt::format("connection lost: {}", mosquittoFailure(rc, neverAccepted && !d->tlsCa_.empty() &&
                                                                                      d->tlsCert_.empty())));
    }

    // With the reason libmosquitto logged for it, when it did.
    // Every failed reconnect comes here too: once the communication loss is declared
    // (checkCommLoss), health keeps saying so and only the last error moves on.
    void lost(const std::string& failure) {
        std::string why = failure;
        bool declared = false;
        {
            const std::lock_guard lock(mutex_);
            if (!loggedReason_.empty()) {
                why = fmt::format("{} ({})", failure, std::exchange(loggedReason_, {}));
            }
            if (connected_ || disconnectedSinceNs_ == 0) {
                disconnectedSinceNs_ = monotonicNs();
            }
            declared = !connected_ && inputsBad_;
            connected_ = false;
            lastError_ = why;
        }
        if (declared) {
            sayCommLost(why);
            return;
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
            ++d->imageSeq_;
            std::fill_n(d->imageInSeq_.begin(), n, d->imageSeq_);
            d->inputsBad_ = false; // after a comm loss: the first of the peer's values again
            d->publishInputs();
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
            d->inputsBad_ = false; // after a comm loss: the first of the peer's values again
            d->publishInputs();
        }
    }

    // Network thread ------------------------------------------------------------------------
    // libmosquitto's loop, and the reconnects, after reconnect_ms doubling up to reconnect_max_ms
    // (reset by a connect; never less than kMinRetryMs apart). Not mosquitto_loop_start: its loop
    // gives up for good after a TLS failure or EPROTO, which an abrupt end of a TLS connection is,
    // so a driver whose TLS broker was killed never connected again. The loop waits at most
    // kLoopMs, so a stop is seen that soon; the stop's DISCONNECT is sent from here, never beside a
    // reconnect, and the loop runs until it is out (bounded). The client's callbacks run here (its
    // log callback also on the threads that publish).
    void networkLoop() {
        constexpr int kLoopMs = 100;
        constexpr int kStopRounds = 20;
        constexpr std::int64_t kMinRetryMs = 100;
        const std::int64_t firstDelayMs = std::max(reconnectMs_, kMinRetryMs);
        std::int64_t delayMs = firstDelayMs;
        std::int64_t retryAtNs = 0; // while disconnected: the next attempt; 0: not scheduled
        int stopRounds = -1;        // from the stop on: rounds since the DISCONNECT
        while (true) {
            if (stopRounds < 0 && networkStop_.load(std::memory_order_acquire)) {
                mosquitto_disconnect(mosq_);
                stopRounds = 0;
            }
            const int rc = mosquitto_loop(mosq_, kLoopMs, 1);
            if (stopRounds >= 0) {
                if (rc != MOSQ_ERR_SUCCESS || ++stopRounds > kStopRounds) {
                    return;
                }
                continue;
            }
            if (rc == MOSQ_ERR_SUCCESS) {
                retryAtNs = 0;
                if (delayMs != firstDelayMs && connectedNow()) {
                    delayMs = firstDelayMs;
                }
                continue;
            }
            const std::int64_t now = monotonicNs();
            if (retryAtNs == 0) {
                retryAtNs = now + delayMs * 1'000'000;
            } else if (now >= retryAtNs) {
                retryAtNs = 0;
                delayMs = std::max(std::min(delayMs * 2, reconnectMaxMs_), kMinRetryMs);
                (void)mosquitto_reconnect_async(mosq_);
                continue;
            }
            // Without a connection the loop returns at once: wait here instead, a stop seen soon.
            std::this_thread::sleep_for(std::chrono::milliseconds(
                std::min<std::int64_t>(kLoopMs, std::max<std::int64_t>(1, (retryAtNs - now) / 1'000'000))));
        }
    }

    bool connectedNow() {
        const std::lock_guard lock(mutex_);
        return connected_;
    }

    // Publisher thread ----------------------------------------------------------------------
    void publishLoop() {
        std::unique_lock lock(mutex_);
        // Read before the pass takes the outputs: a cycle or a latch that notifies after the
        // take ends the next wait at once instead of waiting out the 50 ms.
        std::uint32_t seen = wake_.epoch();
        while (!stopping_) {
            wake_.waitFor(lock, seen, std::chrono::milliseconds(50));
            if (stopping_) {
                break;
            }
            seen = wake_.epoch();
            checkCommLoss(lock);
            if (!connected_) {
                continue;
            }
            publishChanges(lock);
        }
        // The runtime latches the safe state right before it stops the drivers (SIGTERM, --for,
        // a halt): the stop can win the race against the pass that was woken to publish it, so
        // the safe values go out here rather than leaving subscribers with the program's values.
        if (out_.latched() && connected_) {
            publishChanges(lock);
        }
    }

    // Publishes what changed since the last pass (everything after a reconnect); nothing before
    // the first cycle's outputs. Called and returns with `lock` held; releases it while
    // publishing.
    void publishChanges(std::unique_lock<std::mutex>& lock) {
        const OutputExchange::Source source = out_.take();
        if (source == OutputExchange::Source::None) {
            return;
        }
        const std::uint8_t* slot = out_.program();
        if (source == OutputExchange::Source::Safe) {
            slot = out_.safeImage().data();
        }
        const bool all = republish_;
        republish_ = false;
        copyBytes(imageOutNow_.data(), slot, imageOutNow_.size()); // same sizes: no allocation
        copyBytes(outNow_.data(), slot + imageOutNow_.size(), outNow_.size());
        lock.unlock();
        for (std::size_t i = 0; i < publish_.size(); ++i) {
            std::uint8_t* now = outNow_.data() + i * 8;
            std::uint8_t* sent = outSent_.data() + i * 8;
            if (all || !sentOnce_ || std::memcmp(now, sent, 8) != 0) {
                const std::string payload = encodePayload(publish_[i].type, now);
                send(publish_[i].topic, payload, publish_[i].retain);
                std::memcpy(sent, now, 8);
            }
        }
        if (!topicOut_.empty() && (all || !sentOnce_ || imageOutNow_ != imageOutSent_)) {
            send(topicOut_, {reinterpret_cast<const char*>(imageOutNow_.data()), imageOutNow_.size()}, false);
            imageOutSent_ = imageOutNow_;
        }
        sentOnce_ = true;
        lock.lock();
    }

    void checkCommLoss(std::unique_lock<std::mutex>& lock) {
        if (connected_ || inputsBad_ || monotonicNs() - disconnectedSinceNs_ < commLossMs_ * 1'000'000) {
            return;
        }
        std::fill(inShared_.begin(), inShared_.end(), 0);
        std::fill(imageIn_.begin(), imageIn_.end(), 0);
        inputsBad_ = true;
        publishInputs(); // the zeros and the flag that says so, together
        const std::string lastError = lastError_;
        lock.unlock();
        sayCommLost(lastError);
        lock.lock();
    }

    // Health while the communication loss lasts, with the last error (each failed reconnect's).
    void sayCommLost(const std::string& lastError) {
        health_.set(onError_ == OnError::Fault ? Health::Faulted : Health::Degraded,
                    fmt::format("broker unreachable for over {} ms ({}); subscribed inputs bad (read as 0)",
                                commLossMs_, lastError),
                    IoError::CommLost, true);
    }

    // Config
    HostPort broker_;
    std::string clientId_, topicIn_, topicOut_, username_, password_, statusTopic_, tlsCa_, tlsCert_, tlsKey_;
    std::size_t inBytes_ = 64, outBytes_ = 64;
    int qos_ = 1, keepalive_ = 30;
    std::int64_t reconnectMs_ = 1000, reconnectMaxMs_ = 30000, commLossMs_ = 5000;
    OnError onError_ = OnError::Warn; // CODESYS: a bus error does not stop the PLC
    std::vector<Binding> publish_, subscribe_;

    // Shared with the scan thread (and the watchdog) without a lock (scan_exchange.h).
    static constexpr std::size_t kInHeader = 16; // [seq u64][bad, 7 bytes like it]
    TripleBuffer in_;                            // the network and publisher threads, under mutex_ -> the scan thread
    OutputExchange out_;                         // the scan thread -> the publisher thread (or stop() after it)
    Wakeup wake_;                                // notified by the scan thread after every cycle: no lock (wakeup.h)

    // The driver's own threads', under mutex_; the scan thread never takes it.
    std::mutex mutex_;
    std::vector<std::uint8_t> inShared_, imageIn_;
    std::vector<std::uint64_t> imageInSeq_; // per topic_in byte: the message that last carried it
    std::uint64_t imageSeq_ = 0;            // topic_in messages so far
    bool stopping_ = false, connected_ = false, republish_ = false;
    bool inputsBad_ = false;
    std::int64_t disconnectedSinceNs_ = 0;
    std::string lastError_;
    std::string loggedReason_;   // the first reason libmosquitto logged since the last connect
    bool everConnected_ = false; // a broker accepted a session of this driver

    // Scan thread only.
    std::uint64_t seenSeq_ = 0; // the topic_in message last written to the image
    bool inBad_ = false;        // the inputs of this cycle are bad (the slot's flag)

    // Publisher thread only (then stop()).
    std::vector<std::uint8_t> outNow_, outSent_, imageOutNow_, imageOutSent_;
    bool sentOnce_ = false;

    mosquitto* mosq_ = nullptr;
    std::atomic<std::int64_t> unacknowledged_{0}; // publishes the broker has not answered yet (send)
    std::thread publisher_;
    std::thread network_;                  // networkLoop
    std::atomic<bool> networkStop_{false}; // stop(): end networkLoop once the DISCONNECT is out
    HealthCell health_;
};

} // namespace

std::unique_ptr<Driver> detail::makeMqtt() {
    return std::make_unique<Mqtt>();
}

} // namespace takt::io
