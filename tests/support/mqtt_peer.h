#pragma once
// A mosquitto broker on a free loopback port and an MQTT client of the test's own, for the
// driver and `takt run` tests.
#include <mosquitto.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "support/io_test_support.h"

namespace takt::io::test {

constexpr const char* kBroker = "/usr/sbin/mosquitto";

class Broker {
public:
    explicit Broker(const TempDir& dir) : port_(freeTcpPort()) {
        config_ = dir.write("mosquitto.conf", fmt::format("listener {} 127.0.0.1\nallow_anonymous true\n"
                                                          "persistence false\nlog_dest none\n",
                                                          port_));
    }
    bool start() {
        child_ = std::make_unique<Process>(std::vector<std::string>{kBroker, "-c", config_.string()});
        return waitForPort(port_, std::chrono::seconds(15));
    }
    void kill() { child_.reset(); }
    [[nodiscard]] std::uint16_t port() const { return port_; }

private:
    std::uint16_t port_;
    std::filesystem::path config_;
    std::unique_ptr<Process> child_;
};

// The test's own MQTT client: records every message, publishes on request. The constructor
// returns once the subscription is acknowledged (or after 15 s): the drivers publish a value only
// when it changes, so a message sent before the subscription would never come again.
class Peer {
public:
    explicit Peer(std::uint16_t port) {
        mosquitto_lib_init();
        m_ = mosquitto_new(nullptr, true, this);
        mosquitto_message_callback_set(m_, [](mosquitto*, void* self, const mosquitto_message* msg) {
            auto* p = static_cast<Peer*>(self);
            const std::lock_guard lock(p->mutex_);
            p->messages_.emplace_back(msg->topic, std::string(static_cast<const char*>(msg->payload),
                                                              static_cast<std::size_t>(std::max(msg->payloadlen, 0))));
        });
        mosquitto_connect_callback_set(m_, [](mosquitto* m, void*, int rc) {
            if (rc == 0) {
                mosquitto_subscribe(m, nullptr, "line1/#", 1);
            }
        });
        mosquitto_subscribe_callback_set(
            m_, [](mosquitto*, void* self, int, int, const int*) { static_cast<Peer*>(self)->subscribed_ = true; });
        mosquitto_reconnect_delay_set(m_, 1, 1, false);
        mosquitto_connect_async(m_, "127.0.0.1", port, 30);
        mosquitto_loop_start(m_);
        takt::test::waitUntil([this] { return subscribed_.load(); }, std::chrono::seconds(15),
                              std::chrono::milliseconds(5));
    }
    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;
    ~Peer() {
        mosquitto_disconnect(m_);
        mosquitto_loop_stop(m_, false);
        mosquitto_destroy(m_);
    }
    void publish(const std::string& topic, const std::string& payload, bool retain = false) {
        mosquitto_publish(m_, nullptr, topic.c_str(), static_cast<int>(payload.size()), payload.data(), 1, retain);
    }
    bool received(const std::string& topic, const std::string& payload) {
        const std::lock_guard lock(mutex_);
        return std::find(messages_.begin(), messages_.end(), std::pair{topic, payload}) != messages_.end();
    }
    std::string last(const std::string& topic) {
        const std::lock_guard lock(mutex_);
        for (auto it = messages_.rbegin(); it != messages_.rend(); ++it) {
            if (it->first == topic) {
                return it->second;
            }
        }
        return "";
    }

private:
    mosquitto* m_ = nullptr;
    std::atomic<bool> subscribed_{false};
    std::mutex mutex_;
    std::vector<std::pair<std::string, std::string>> messages_;
};

} // namespace takt::io::test
