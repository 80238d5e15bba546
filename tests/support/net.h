#pragma once
// Loopback TCP ports for tests that start servers (takt's control endpoint, Modbus and MQTT
// peers).
#include <chrono>
#include <cstdint>

namespace takt::test {

// A loopback TCP port nobody listens on right now; 0 when none could be had.
std::uint16_t freeTcpPort();

// True once something accepts TCP connections on 127.0.0.1:port.
bool tcpPortOpen(std::uint16_t port);

// Polls tcpPortOpen every `interval` until it holds or `limit` passes (a hang guard).
bool waitForPort(std::uint16_t port, std::chrono::milliseconds limit,
                 std::chrono::milliseconds interval = std::chrono::milliseconds(5));

} // namespace takt::test
