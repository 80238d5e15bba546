#pragma once
// A Modbus RTU slave for the modbus-rtu tests: socat joins two pseudo-terminals into a serial
// line, a libmodbus RTU server answers on one end, and the driver opens the other.
#include <modbus.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/io_test_support.h"

namespace takt::io::test {

inline constexpr const char* kSocat = "/usr/bin/socat";

// The line: `socat pty,raw,echo=0,link=<dir>/takt-end pty,raw,echo=0,link=<dir>/peer-end`.
// Stopping it takes both devices away, as unplugging a USB adapter does.
class SerialLine {
public:
    explicit SerialLine(const std::filesystem::path& dir)
        : driverEnd_((dir / "takt-end").string()), peerEnd_((dir / "peer-end").string()) {}

    bool start() {
        socat_ = std::make_unique<Process>(
            std::vector<std::string>{kSocat, "pty,raw,echo=0,link=" + driverEnd_, "pty,raw,echo=0,link=" + peerEnd_});
        return takt::test::waitUntil(
            [&] { return std::filesystem::exists(driverEnd_) && std::filesystem::exists(peerEnd_); },
            std::chrono::seconds(10), std::chrono::milliseconds(10));
    }
    void stop() {
        if (socat_) {
            socat_->terminate();
            socat_.reset();
        }
    }
    [[nodiscard]] const std::string& driverEnd() const { return driverEnd_; }
    [[nodiscard]] const std::string& peerEnd() const { return peerEnd_; }

private:
    std::string driverEnd_, peerEnd_;
    std::unique_ptr<Process> socat_;
};

// A libmodbus RTU server (slave `unit`, 19200 8E1) on its own thread, stoppable and restartable
// on one device. It records every value written to coil 0, so a test can see what a driver sent
// and when.
class RtuPeer {
public:
    RtuPeer(std::string device, int unit) : device_(std::move(device)), unit_(unit) {
        mapping_ = modbus_mapping_new(4096, 512, 512, 512);
    }
    RtuPeer(const RtuPeer&) = delete;
    RtuPeer& operator=(const RtuPeer&) = delete;
    ~RtuPeer() {
        stop();
        modbus_mapping_free(mapping_);
    }

    void start() {
        stopping_ = false;
        ctx_ = modbus_new_rtu(device_.c_str(), 19200, 'E', 8, 1);
        ASSERT_NE(ctx_, nullptr);
        modbus_set_slave(ctx_, unit_);
        ASSERT_EQ(modbus_connect(ctx_), 0) << device_ << ": " << modbus_strerror(errno);
        thread_ = std::thread([this] { run(); });
    }
    // The slave goes silent and closes its port.
    void stop() {
        stopping_ = true;
        if (thread_.joinable()) {
            thread_.join();
        }
        if (ctx_ != nullptr) {
            // The port is closed by hand: a fresh context (see forgetOtherSlavesReply) never
            // read the settings it would restore on modbus_close.
            const int fd = modbus_get_socket(ctx_);
            modbus_set_socket(ctx_, -1);
            modbus_free(ctx_);
            ::close(fd);
            ctx_ = nullptr;
        }
    }

    void setInputRegister(int i, std::uint16_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_input_registers[i] = v;
    }
    void setDiscreteInput(int i, std::uint8_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_input_bits[i] = v;
    }
    void setCoil(int i, std::uint8_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_bits[i] = v;
    }
    std::uint8_t coil(int i) {
        const std::lock_guard lock(mutex_);
        return mapping_->tab_bits[i];
    }
    std::uint16_t holding(int i) {
        const std::lock_guard lock(mutex_);
        return mapping_->tab_registers[i];
    }
    std::vector<std::uint8_t> coil0History() {
        const std::lock_guard lock(mutex_);
        return coil0_;
    }
    void clearHistory() {
        const std::lock_guard lock(mutex_);
        coil0_.clear();
    }
    // Requests answered so far.
    [[nodiscard]] int answered() const { return answered_; }
    // Requests for another slave on the line, seen and left unanswered.
    [[nodiscard]] int ignored() const { return ignored_; }
    // The shortest silence seen between a reply and the request after it.
    [[nodiscard]] std::chrono::nanoseconds shortestQuiet() const { return std::chrono::nanoseconds(shortestQuietNs_); }

private:
    void run() {
        std::uint8_t query[MODBUS_RTU_MAX_ADU_LENGTH];
        while (!stopping_) {
            pollfd p{modbus_get_socket(ctx_), POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) {
                continue;
            }
            const int len = modbus_receive(ctx_, query);
            if (len < 0) {
                modbus_flush(ctx_);
                continue;
            }
            if (len == 0) {
                ++ignored_; // for another slave
                forgetOtherSlavesReply();
                continue;
            }
            const auto now = std::chrono::steady_clock::now();
            if (answered_ > 0) {
                shortestQuietNs_ = std::min<std::int64_t>(shortestQuietNs_, (now - lastReply_).count());
            }
            const std::lock_guard lock(mutex_);
            const int fc = query[1];
            // The silence is measured from the start of the reply's write: a peer thread preempted
            // after the write (a loaded machine) would otherwise take a late time and measure the
            // driver's gap as shorter than it was. A driver that does not wait is still caught.
            const auto replying = std::chrono::steady_clock::now();
            if (modbus_reply(ctx_, query, len, mapping_) > 0) {
                lastReply_ = replying;
                ++answered_;
            }
            if ((fc == 0x0F || fc == 0x05) && ((query[2] << 8) | query[3]) == 0) {
                coil0_.push_back(mapping_->tab_bits[0]);
            }
        }
    }

    // After a request for another slave, libmodbus's server takes the next frame for that
    // slave's reply and drops it unread. On a bus whose other slave is silent that frame is the
    // next request to this one, so the peer starts a fresh context on the same open port.
    void forgetOtherSlavesReply() {
        modbus_t* fresh = modbus_new_rtu(device_.c_str(), 19200, 'E', 8, 1);
        modbus_set_slave(fresh, unit_);
        modbus_set_socket(fresh, modbus_get_socket(ctx_));
        modbus_set_socket(ctx_, -1);
        modbus_free(ctx_);
        ctx_ = fresh;
    }

    std::string device_;
    int unit_;
    modbus_t* ctx_ = nullptr;
    modbus_mapping_t* mapping_ = nullptr;
    std::atomic<bool> stopping_ = false;
    std::atomic<int> answered_ = 0;
    std::atomic<int> ignored_ = 0;
    std::chrono::steady_clock::time_point lastReply_;
    std::atomic<std::int64_t> shortestQuietNs_ = INT64_MAX;
    std::thread thread_;
    std::mutex mutex_;
    std::vector<std::uint8_t> coil0_;
};

} // namespace takt::io::test
