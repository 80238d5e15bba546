// The loopback driver: the outputs of cycle n are the inputs of cycle n+1, byte for byte
// (%QB k -> %IB k). Params: `bytes` (owned bytes of %I and %Q from 0, default 64, 1..65536).
// It is the reference implementation of the driver API and what the watchdog and fault tests
// observe safe state through: a latched safe state is what the next inputs read.

#include <fmt/format.h>

#include "driver_support.h"
#include "registry.h"

namespace takt::io {
namespace {

constexpr std::int64_t kDefaultBytes = 64;
constexpr std::int64_t kMaxBytes = 65536;

class Loopback final : public Driver {
public:
    std::string_view name() const noexcept override { return "loopback"; }

    bool init(const DriverSpec& spec, std::string& error) override {
        std::int64_t bytes = kDefaultBytes;
        for (const auto& [key, node] : spec.params) {
            if (key.str() != "bytes") {
                error = fmt::format("{}.{}: unknown parameter of the loopback driver (known: bytes)",
                                    spec.source.keyPrefix, key.str());
                return false;
            }
            const auto v = node.value<std::int64_t>();
            if (!node.is_integer() || !v || *v < 1 || *v > kMaxBytes) {
                error = fmt::format("{}.bytes: expected an integer 1..{}", spec.source.keyPrefix, kMaxBytes);
                return false;
            }
            bytes = *v;
        }
        wire_.resize(static_cast<std::size_t>(bytes));
        return true;
    }

    std::vector<ByteRange> ownedRanges() const override {
        const auto n = static_cast<std::uint32_t>(wire_.size());
        return {{Area::Input, 0, n, Access::Write}, {Area::Output, 0, n, Access::Read}};
    }

    bool start(std::string& /*error*/) override { return true; }

    void readInputs(ImageView image) noexcept override { wire_.read(image.inputs); }

    void writeOutputs(ImageView image) noexcept override { wire_.write(image.outputs); }

    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override { wire_.setSafe(safeOutputs); }
    void applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept override { wire_.latchSafe(); }

    void releaseSafeState() noexcept override { wire_.release(); }

    HealthStatus health() const override { return {}; }

    void stop() noexcept override {}

private:
    // Written and read by the scan thread; the watchdog may latch the safe state into it
    // meanwhile, without a lock (scan_exchange.h).
    detail::OutputLatch wire_;
};

} // namespace

std::unique_ptr<Driver> detail::makeLoopback() {
    return std::make_unique<Loopback>();
}

} // namespace takt::io
