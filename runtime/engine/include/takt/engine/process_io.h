#pragma once
// What the scan loop needs from field I/O, without knowing drivers (takt_io implements it over
// the configured drivers: io::DriverSet). Keeping this interface in takt_engine keeps the layer
// graph pointing one way: takt_io depends on takt_engine, never the reverse.
#include <cstdint>
#include <span>
#include <string>

namespace takt::engine {

// The scan thread's process image for one cycle.
struct ProcessImageView {
    std::span<std::uint8_t> inputs;  // %I
    std::span<std::uint8_t> outputs; // %Q
    std::span<std::uint8_t> memory;  // %M
    std::int64_t cycleStartNs = 0;   // CLOCK_MONOTONIC
    std::int64_t cycleIntervalNs = 0;
};

// Worst health over all drivers, and how many are in each state; cheap enough for every cycle.
struct IoHealthSummary {
    std::uint8_t worst = 0; // 0 ok, 1 degraded, 2 faulted (io::Health order)
    std::uint16_t degraded = 0;
    std::uint16_t faulted = 0;
    std::uint16_t failedClosed = 0; // faulted drivers that fail closed (on_error = "fault")
};

class ProcessIo {
public:
    virtual ~ProcessIo() = default;

    // Bytes of each area the I/O owns, so the image is sized before the first cycle.
    [[nodiscard]] virtual std::size_t inputBytes() const noexcept = 0;
    [[nodiscard]] virtual std::size_t outputBytes() const noexcept = 0;
    [[nodiscard]] virtual std::size_t memoryBytes() const noexcept = 0;

    // Scan thread: never block, never allocate, never throw.
    virtual void readInputs(const ProcessImageView& image) noexcept = 0;
    virtual void writeOutputs(const ProcessImageView& image) noexcept = 0;

    // Any thread (the watchdog calls it while the scan thread may be stuck in the VM): drive
    // every output to the configured safe state and latch it; writeOutputs() is ignored until
    // releaseSafeState().
    virtual void applySafeState() noexcept = 0;
    virtual void releaseSafeState() noexcept = 0;
    // The %Q image applySafeState() puts on the field (zeros past its end), so that while it is
    // latched io.read and the status report what the field sees, not the program's last outputs.
    // Fixed once the I/O is configured.
    [[nodiscard]] virtual std::span<const std::uint8_t> safeOutputs() const noexcept { return {}; }

    // Any thread.
    [[nodiscard]] virtual IoHealthSummary healthSummary() const noexcept = 0;
    // The fault path only (it may allocate): which driver failed closed and why, for the fault
    // record ("modbus-tcp: communication lost …").
    [[nodiscard]] virtual std::string failedClosedReason() const { return {}; }
};

} // namespace takt::engine
