// The PM QoS CPU latency request (cpu_latency.h).
#include "takt/engine/cpu_latency.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace takt::engine {

std::optional<std::int32_t> heldCpuLatencyUs(const RuntimeConfig::Realtime& rt) noexcept {
    if (rt.cpuDmaLatencyUs) {
        if (*rt.cpuDmaLatencyUs < 0) {
            return std::nullopt; // cpu_dma_latency_us = false
        }
        return rt.cpuDmaLatencyUs;
    }
    return rt.fifo ? std::optional<std::int32_t>{0} : std::nullopt;
}

std::string CpuLatencyRequest::hold(std::int32_t us, const char* device) {
    release();
    const int fd = ::open(device, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return fmt::format("cpu_dma_latency_us: {} not opened ({}); an idle CPU's wake-up may add its latency "
                           "to every release (run as root, or give the service's user write access: the "
                           "package's udev rule does for group takt)",
                           device, std::strerror(errno));
    }
    // The device takes the request as a binary 32-bit value (a hex string also works; binary is
    // what every kernel since 2.6.25 reads).
    if (::write(fd, &us, sizeof us) != static_cast<ssize_t>(sizeof us)) {
        const int err = errno;
        ::close(fd);
        return fmt::format("cpu_dma_latency_us: {} refused {} us ({})", device, us, std::strerror(err));
    }
    fd_ = fd;
    return {};
}

void CpuLatencyRequest::release() noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

} // namespace takt::engine
