#pragma once
// The configured drivers as one process I/O for the scan loop (engine::ProcessIo): created from
// an IoConfig through the registry, checked so that no two drivers own the same bytes, started
// and stopped together, and fanned out to every cycle. Safe state is the whole %Q image with
// io.toml's [[io.safe_state]] applied (safeOutputImage), handed to every driver.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "takt/engine/process_io.h"
#include "takt/io/driver.h"
#include "takt/io/io_config.h"

namespace takt::io {

struct DriverHealthReport {
    std::string name;
    HealthStatus status;
};

class DriverSet final : public engine::ProcessIo {
public:
    DriverSet() = default;
    ~DriverSet() override;
    DriverSet(const DriverSet&) = delete;
    DriverSet& operator=(const DriverSet&) = delete;

    // Creates and initialises every driver of `config`, checks ownership and builds the safe
    // image for at least `programOutputBytes` of %Q. False with `error` naming the file and
    // driver; nothing is started then.
    bool configure(const IoConfig& config, std::size_t programOutputBytes, std::string& error);
    // The same for drivers made by the caller (tests); `specs[i]` is what `drivers[i]` is
    // initialised with.
    bool configure(std::vector<std::unique_ptr<Driver>> drivers, const std::vector<DriverSpec>& specs,
                   const IoConfig& config, std::size_t programOutputBytes, std::string& error);

    // Starts every driver in order; on a failure stops those already started.
    bool start(std::string& error);
    void stop() noexcept;

    [[nodiscard]] std::size_t driverCount() const { return drivers_.size(); }
    [[nodiscard]] Driver& driver(std::size_t i) { return *drivers_[i]; }
    [[nodiscard]] const std::vector<std::uint8_t>& safeImage() const { return safe_; }
    // What configure accepted with a warning (truST whole-image writers sharing input bytes).
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

    // Asks every driver for its health (off the cycle, e.g. 4 times a second) and caches the
    // summary the scan thread publishes.
    [[nodiscard]] std::vector<DriverHealthReport> refreshHealth();

    // engine::ProcessIo
    [[nodiscard]] std::size_t inputBytes() const noexcept override { return bytes_[0]; }
    [[nodiscard]] std::size_t outputBytes() const noexcept override { return bytes_[1]; }
    [[nodiscard]] std::size_t memoryBytes() const noexcept override { return bytes_[2]; }
    void readInputs(const engine::ProcessImageView& image) noexcept override;
    void writeOutputs(const engine::ProcessImageView& image) noexcept override;
    void applySafeState() noexcept override;
    void releaseSafeState() noexcept override;
    [[nodiscard]] std::span<const std::uint8_t> safeOutputs() const noexcept override { return safe_; }
    [[nodiscard]] engine::IoHealthSummary healthSummary() const noexcept override;
    [[nodiscard]] std::string failedClosedReason() const override;

private:
    // One driver's status block (DriverSpec::status): written by the scan thread in readInputs
    // from `word`, which refreshHealth() packs (bytes 0..3 of the block), and from the exchange
    // count the driver keeps; neither needs a lock or an allocation.
    struct StatusSlot {
        ByteRange range;                 // count 0: no block
        std::uint64_t seenExchanges = 0; // scan thread
        std::uint32_t cycles = 0;        // scan thread: cycles since the last good exchange
    };
    void writeStatusBlocks(const ImageView& image) noexcept;

    std::vector<std::unique_ptr<Driver>> drivers_;
    std::vector<StatusSlot> status_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> statusWords_; // per driver, packed by refreshHealth
    std::vector<std::string> labels_;                           // "io.drivers[1] 'loopback'" for errors
    std::vector<std::string> warnings_;
    std::vector<bool> started_;
    std::size_t bytes_[3] = {0, 0, 0};
    std::vector<std::uint8_t> safe_;
    std::atomic<std::uint8_t> worst_{0};
    std::atomic<std::uint16_t> degraded_{0}, faulted_{0}, failedClosed_{0};
};

// "%IB0..%IB63" for a byte range.
[[nodiscard]] std::string describeRange(const ByteRange& r);
// The warning for two truST whole-image writers sharing `common` (sharedWholeImage), after the
// names of the earlier and the later driver; `takt validate` and `takt run` say the same.
[[nodiscard]] std::string wholeImageOverlapWarning(const std::string& earlier, const std::string& later,
                                                   const ByteRange& common);

} // namespace takt::io
