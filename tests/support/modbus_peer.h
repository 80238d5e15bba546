#pragma once
// A Modbus TCP server on loopback for the driver and `takt run` tests (libmodbus, in-process).
#include <modbus.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace takt::io::test {

// A Modbus TCP server on its own thread (libmodbus), stoppable and restartable on one port.
// It records every value written to coil 0, so a test can see what a client sent and when.
class PeerServer {
public:
    explicit PeerServer(std::uint16_t port) : port_(port) { mapping_ = modbus_mapping_new(4096, 0, 512, 512); }
    PeerServer(const PeerServer&) = delete;
    PeerServer& operator=(const PeerServer&) = delete;
    ~PeerServer() {
        stop();
        modbus_mapping_free(mapping_);
    }

    void start() {
        stopping_ = false;
        ctx_ = modbus_new_tcp("127.0.0.1", port_);
        listenFd_ = modbus_tcp_listen(ctx_, 4);
        ASSERT_GE(listenFd_, 0) << modbus_strerror(errno);
        thread_ = std::thread([this] { run(); });
    }

    // Closes the listener and every connection: the peer is gone.
    void stop() {
        stopping_ = true;
        if (thread_.joinable()) {
            thread_.join();
        }
        if (ctx_ != nullptr) {
            ::close(listenFd_);
            modbus_set_socket(ctx_, -1);
            modbus_free(ctx_);
            ctx_ = nullptr;
        }
    }

    void setRegister(int i, std::uint16_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_registers[i] = v;
    }
    void setInputRegister(int i, std::uint16_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_input_registers[i] = v;
    }
    std::uint8_t coil(int i) {
        const std::lock_guard lock(mutex_);
        return mapping_->tab_bits[i];
    }
    void setCoil(int i, std::uint8_t v) {
        const std::lock_guard lock(mutex_);
        mapping_->tab_bits[i] = v;
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

private:
    void run() {
        std::vector<int> clients;
        std::uint8_t query[MODBUS_TCP_MAX_ADU_LENGTH];
        while (!stopping_) {
            std::vector<pollfd> fds{{listenFd_, POLLIN, 0}};
            for (int c : clients) {
                fds.push_back({c, POLLIN, 0});
            }
            if (::poll(fds.data(), fds.size(), 20) <= 0) {
                continue;
            }
            for (std::size_t i = 1; i < fds.size(); ++i) {
                if (fds[i].revents == 0) {
                    continue;
                }
                modbus_set_socket(ctx_, fds[i].fd);
                const int len = modbus_receive(ctx_, query);
                if (len > 0) {
                    const std::lock_guard lock(mutex_);
                    const int fc = query[7];
                    modbus_reply(ctx_, query, len, mapping_);
                    if (fc == 0x0F || fc == 0x05) {
                        const int addr = (query[8] << 8) | query[9];
                        if (addr == 0) {
                            coil0_.push_back(mapping_->tab_bits[0]);
                        }
                    }
                } else if (len < 0) {
                    ::close(fds[i].fd);
                    clients.erase(std::find(clients.begin(), clients.end(), fds[i].fd));
                }
            }
            if ((fds[0].revents & POLLIN) != 0) {
                const int c = ::accept(listenFd_, nullptr, nullptr);
                if (c >= 0) {
                    clients.push_back(c);
                }
            }
        }
        for (int c : clients) {
            ::close(c);
        }
    }

    std::uint16_t port_;
    modbus_t* ctx_ = nullptr;
    modbus_mapping_t* mapping_ = nullptr;
    int listenFd_ = -1;
    std::atomic<bool> stopping_ = false;
    std::thread thread_;
    std::mutex mutex_;
    std::vector<std::uint8_t> coil0_;
};

// A Modbus TCP master (libmodbus client) of takt's modbus-server: one connection, reconnected
// when a request fails (the server may not listen yet).
class Master {
public:
    explicit Master(std::uint16_t port) : ctx_(modbus_new_tcp("127.0.0.1", port)) {
        modbus_set_response_timeout(ctx_, 1, 0);
    }
    Master(const Master&) = delete;
    Master& operator=(const Master&) = delete;
    ~Master() {
        modbus_close(ctx_);
        modbus_free(ctx_);
    }

    // Coils first..first+7 as a byte (coil `first` = bit 0); nullopt when the request fails.
    std::optional<std::uint8_t> coilByte(int first) {
        std::uint8_t bits[8] = {};
        if (!ensure() || modbus_read_bits(ctx_, first, 8, bits) != 8) {
            drop();
            return std::nullopt;
        }
        std::uint8_t v = 0;
        for (int i = 0; i < 8; ++i) {
            v = static_cast<std::uint8_t>(v | ((bits[i] != 0 ? 1U : 0U) << i));
        }
        return v;
    }
    std::optional<std::uint16_t> holding(int address) {
        std::uint16_t v = 0;
        if (!ensure() || modbus_read_registers(ctx_, address, 1, &v) != 1) {
            drop();
            return std::nullopt;
        }
        return v;
    }
    bool writeCoil(int address, bool v) {
        if (!ensure() || modbus_write_bit(ctx_, address, v ? 1 : 0) != 1) {
            drop();
            return false;
        }
        return true;
    }

private:
    bool ensure() {
        if (!connected_) {
            connected_ = modbus_connect(ctx_) == 0;
        }
        return connected_;
    }
    void drop() {
        modbus_close(ctx_);
        connected_ = false;
    }

    modbus_t* ctx_;
    bool connected_ = false;
};

} // namespace takt::io::test
