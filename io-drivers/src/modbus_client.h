#pragma once
// The Modbus client engine behind modbus-tcp and modbus-rtu: one request/mapping engine (maps,
// polling thread, double buffers, comm loss, safe state) and a transport per driver that only
// knows how to reach the peer. Transport calls happen at init, start, stop and on the driver
// thread, never on the scan path.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include <modbus.h>

#include "driver_support.h"

namespace takt::io::detail {

// The turn on a serial line shared by several drivers: granted in the order it was asked for. A
// driver retrying a silent slave back to back must not starve the others on the bus, and
// std::mutex promises no order (a thread that unlocks and locks again mostly wins).
class LineTurn {
public:
    void lock() {
        std::unique_lock guard(mutex_);
        const std::uint64_t ticket = next_++;
        served_.wait(guard, [&] { return serving_ == ticket; });
    }
    void unlock() {
        {
            const std::lock_guard guard(mutex_);
            ++serving_;
        }
        served_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable served_;
    std::uint64_t next_ = 0;    // the ticket the next asker gets
    std::uint64_t serving_ = 0; // the ticket whose turn it is
};

class ModbusTransport {
public:
    virtual ~ModbusTransport() = default;

    [[nodiscard]] virtual std::string_view driverName() const = 0;
    // The transport's own params; listed before the engine's in the unknown-key error.
    [[nodiscard]] virtual std::span<const std::string_view> keys() const = 0;
    // Reads the transport's params and the unit id (which key and range differ per transport).
    virtual bool init(ParamReader& params, int& unitId) = 0;

    // Before the driver thread starts: anything the transport needs besides the context (a
    // simulated peer, a shared serial line). False with `error` when the driver cannot run.
    virtual bool start(std::string& error) = 0;
    [[nodiscard]] virtual modbus_t* newContext(std::string& error) = 0;
    // Driver thread: connects the context; `why` names the peer on failure.
    virtual bool open(modbus_t* ctx, std::string& why) = 0;
    // Driver thread, before each exchange (under line()): drops stale bytes on a serial line.
    virtual void beforeExchange(modbus_t* ctx) { (void)ctx; }
    // Driver thread, around each request (under line()): a serial line keeps its frames apart.
    virtual void beforeRequest() {}
    virtual void afterRequest() {}
    // Held for a whole exchange: drivers sharing a serial line take turns on it. Null when the
    // transport has a line of its own.
    [[nodiscard]] virtual LineTurn* line() { return nullptr; }
    // After the driver thread has ended and its context is closed.
    virtual void stop() noexcept {}
};

[[nodiscard]] std::unique_ptr<Driver> makeModbusClient(std::unique_ptr<ModbusTransport> transport);

} // namespace takt::io::detail
