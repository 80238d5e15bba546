#pragma once
// The gpio driver (CONFIG.md "io.toml"), visible to tests so they can hand it a fake chip and
// drive its poll step on their own clock.
//
// Params: chip ("gpiochip0"), poll_ms (1), on_error (fault|warn|ignore, fault),
// inputs = [{address = "%IX0.0", line, invert = false, debounce_ms = 0}],
// outputs = [{address = "%QX0.0", line, invert = false, initial = false}].
// `initial` is the logical level from start() until the first cycle's outputs; `invert` flips
// the physical level both ways. Debounce: a new level is taken once the line has read it
// continuously for debounce_ms (sampled every poll_ms), so shorter glitches never reach %I.
// Lines are read and written on the driver's thread, never on the scan thread.
#include <atomic>
#include <thread>
#include <vector>

#include "driver_support.h"
#include "gpio_chip.h"
#include "wakeup.h"

namespace takt::io::detail {

class GpioDriver final : public Driver {
public:
    // ownThread = false: no thread is started and the caller calls poll() itself.
    explicit GpioDriver(GpioChipOpener opener = openGpiodChip, bool ownThread = true);
    ~GpioDriver() override;
    GpioDriver(const GpioDriver&) = delete;
    GpioDriver& operator=(const GpioDriver&) = delete;

    std::string_view name() const noexcept override { return "gpio"; }
    bool init(const DriverSpec& spec, std::string& error) override;
    std::vector<ByteRange> ownedRanges() const override;
    bool start(std::string& error) override;
    void readInputs(ImageView image) noexcept override;
    void writeOutputs(ImageView image) noexcept override;
    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override;
    void applySafeState(std::span<const std::uint8_t> safeOutputs) noexcept override;
    void releaseSafeState() noexcept override;
    HealthStatus health() const override { return health_.get(); }
    bool failsClosed() const noexcept override { return onError_ == OnError::Fault; }
    void stop() noexcept override;

    // One pass of the driver thread at time `nowNs`: sample and debounce every input, drive
    // every output whose level changed.
    void poll(std::int64_t nowNs);

private:
    struct Input {
        ImageAddress address;
        unsigned line = 0;
        bool invert = false;
        std::int64_t debounceNs = 0;
        bool stable = false;    // debounced logical level
        bool candidate = false; // level seen since `since`
        std::int64_t since = 0;
        bool sampled = false;
    };
    struct Output {
        ImageAddress address;
        unsigned line = 0;
        bool invert = false;
        bool initial = false;
        bool driven = false; // logical level last written to the line
    };

    void fail(const std::string& why);

    GpioChipOpener opener_;
    bool ownThread_;
    std::string chipName_;
    std::int64_t pollNs_ = 1'000'000;
    OnError onError_ = OnError::Warn; // CODESYS: a bus error does not stop the PLC
    std::vector<Input> inputs_;       // driver thread
    std::vector<Output> outputs_;     // driver thread
    std::unique_ptr<GpioChip> chip_;

    // Shared with the scan thread (and the watchdog) without a lock (scan_exchange.h): one
    // byte per line each way.
    TripleBuffer in_;
    OutputExchange out_;
    Wakeup wake_; // a safe state to drive at once, or the stop
    std::atomic<bool> stopping_{false};
    std::thread thread_;
    HealthCell health_;
};

} // namespace takt::io::detail
