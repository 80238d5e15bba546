#pragma once
// `device = "loop://NAME"` of the modbus-rtu driver: no serial port, but takt's own simulated RTU
// slave at the driver's slave address, served by libmodbus on the far end of a pseudo-terminal.
// The driver opens the near end like any serial device, so the RTU framing, timeouts and
// reconnects are the real ones. The slave keeps what it is written and loops it back, like the
// loopback driver: holding register k also becomes input register k, coil k discrete input k.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include <modbus.h>

namespace takt::io::detail {

inline constexpr std::string_view kLoopScheme = "loop://";

class LoopSlave {
public:
    LoopSlave() = default;
    LoopSlave(const LoopSlave&) = delete;
    LoopSlave& operator=(const LoopSlave&) = delete;
    ~LoopSlave() { stop(); }

    // Opens the pseudo-terminal and starts answering requests for `unitId`.
    bool start(int unitId, std::string& error);
    // The near end's path (/dev/pts/N), for modbus_new_rtu.
    [[nodiscard]] const std::string& device() const { return device_; }
    void stop() noexcept;

private:
    void run();
    void loopBack(const std::uint8_t* query);

    int far_ = -1;  // the pseudo-terminal master, served here
    int near_ = -1; // held open so the master never sees a hang-up between driver reconnects
    std::string device_;
    modbus_t* ctx_ = nullptr;
    modbus_mapping_t* tables_ = nullptr;
    std::atomic<bool> stopping_ = false;
    std::thread thread_;
};

} // namespace takt::io::detail
