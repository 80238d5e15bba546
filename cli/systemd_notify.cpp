#include "systemd_notify.h"

#include <systemd/sd-daemon.h>

#include "takt/engine/scan_loop.h"

namespace takt::cli {

SystemdNotifier::SystemdNotifier() {
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0) {
        watchdogUsec_ = usec;
    }
}

void SystemdNotifier::ready(const std::string& status) {
    const std::string msg = "READY=1\nSTATUS=" + status;
    (void)sd_notify(0, msg.c_str());
    lastPingNs_ = engine::monotonicNs();
}

void SystemdNotifier::watchdogPing() {
    if (watchdogUsec_ == 0) {
        return;
    }
    const std::int64_t now = engine::monotonicNs();
    if (now - lastPingNs_ >= static_cast<std::int64_t>(watchdogUsec_) * 1000 / 2) {
        (void)sd_notify(0, "WATCHDOG=1");
        lastPingNs_ = now;
    }
}

void SystemdNotifier::status(const std::string& text) {
    (void)sd_notify(0, ("STATUS=" + text).c_str());
}

void SystemdNotifier::stopping() {
    (void)sd_notify(0, "STOPPING=1");
}

} // namespace takt::cli
