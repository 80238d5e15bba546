#pragma once
// The Modbus client engine behind modbus-tcp and modbus-rtu: one request/mapping engine (maps,
// polling thread, triple buffers to the scan thread, comm loss, safe state) and a transport per driver that only
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
#include "line_turn.h"

namespace takt::io::detail {

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
    // Driver thread: after a failed exchange (`lastErrno` is the failed request's errno, 0 for a
    // short response) and at stop (0). A TCP connection is closed and opened again; a serial
    // port stays open through a slave's silence.
    virtual void close(modbus_t* ctx, int lastErrno) {
        (void)lastErrno;
        modbus_close(ctx);
    }
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
