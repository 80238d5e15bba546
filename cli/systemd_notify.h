#pragma once
// sd_notify(3) for `takt run` under systemd (Type=notify, WatchdogSec=): READY=1 once the scan
// runs, WATCHDOG=1 pings at half the unit's watchdog interval, STATUS= with the run's status line
// once a second, STOPPING=1 on the way out.
// Without NOTIFY_SOCKET every call does nothing.
#include <cstdint>
#include <string>

namespace takt::cli {

class SystemdNotifier {
public:
    SystemdNotifier();
    void ready(const std::string& status);
    // Sends WATCHDOG=1 when half the watchdog interval passed since the last ping.
    void watchdogPing();
    void stopping();
    // STATUS= for `systemctl status`: the run's status line.
    void status(const std::string& text);
    [[nodiscard]] bool watchdogEnabled() const { return watchdogUsec_ != 0; }

private:
    std::uint64_t watchdogUsec_ = 0;
    std::int64_t lastPingNs_ = 0;
};

} // namespace takt::cli
