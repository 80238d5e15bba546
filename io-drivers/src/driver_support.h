#pragma once
// Pieces every field driver shares: direct addresses in params, a params reader whose errors
// name the key, the on_error policy, reconnect back-off and a thread-safe health cell.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "scan_exchange.h"
#include "takt/io/driver.h"

namespace takt::io::detail {

// memcpy of `n` bytes where `n` may be 0 with a null pointer (an empty vector's data()), which
// memcpy must not see.
inline void copyBytes(void* to, const void* from, std::size_t n) noexcept {
    if (n != 0) {
        std::memcpy(to, from, n);
    }
}

// A direct address from a driver's params ("%IX0.1", "%QW4", "%MD2").
struct ImageAddress {
    Area area = Area::Input;
    char sizeLetter = 'X';        // X B W D L
    std::uint32_t byteOffset = 0; // address mode applied
    std::uint8_t bit = 0;         // for X
    std::uint32_t size = 0;       // bytes; 0 for a bit

    [[nodiscard]] bool isBit() const { return sizeLetter == 'X'; }
    // Position of the first bit in the area: byteOffset * 8 + bit.
    [[nodiscard]] std::uint64_t bitPosition() const { return std::uint64_t{byteOffset} * 8 + bit; }
};

// False with `why` ("expected a direct address like %IW0") for anything but a full address.
[[nodiscard]] bool parseImageAddress(std::string_view text, bool byteAddressing, ImageAddress& out, std::string& why);
[[nodiscard]] std::string_view areaName(Area a); // "%I", "%Q", "%M"

// Reads one driver's params table. Every error names `prefix.key` (or `prefix.key[i].sub`).
// The first error wins; later calls are no-ops once failed.
class ParamReader {
public:
    ParamReader(const toml::table& table, std::string prefix, std::string& error)
        : table_(table), prefix_(std::move(prefix)), error_(error) {}

    // Unknown keys are errors (no silent defaults for typos), listing the known ones.
    bool onlyKeys(std::span<const std::string_view> known, std::string_view what);

    std::optional<std::string> string(std::string_view key, bool required = false);
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
    std::optional<bool> boolean(std::string_view key);
    // An array of inline tables (`inputs = [{…}, …]`); nullptr when absent.
    const toml::array* tableArray(std::string_view key);
    const toml::table* table(std::string_view key);
    [[nodiscard]] bool has(std::string_view key) const { return table_.contains(key); }

    bool fail(std::string_view key, std::string_view message);
    // Takes over the complete error of a nested reader (element of an array).
    bool adopt(const std::string& nestedError);
    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] const std::string& prefix() const { return prefix_; }
    [[nodiscard]] std::string keyPath(std::string_view key) const { return prefix_ + "." + std::string(key); }

private:
    const toml::table& table_;
    std::string prefix_;
    std::string& error_;
    bool ok_ = true;
};

// A reader for element `index` of the array `key` (errors name "prefix.key[index].sub").
[[nodiscard]] std::string elementPrefix(const ParamReader& parent, std::string_view key, std::size_t index);

// on_error (CONFIG.md): what a communication error does to the driver's health.
//   fault  -> faulted while the error lasts (the runtime's fault policy decides what follows)
//   warn   -> degraded and logged once per error episode
//   ignore -> health stays ok until comm_loss_timeout_ms; then degraded like warn
enum class OnError : std::uint8_t { Fault, Warn, Ignore };
[[nodiscard]] bool parseOnError(ParamReader& params, OnError& out);

// "host:port" (IPv4, name, or [IPv6]); the port may be omitted when `defaultPort` is set.
struct HostPort {
    std::string host;
    std::uint16_t port = 0;
};
[[nodiscard]] bool parseHostPort(std::string_view text, std::optional<std::uint16_t> defaultPort, HostPort& out,
                                 std::string& why);

// Exponential reconnect back-off: first, 2*first, … capped at `max`; reset on success.
class Backoff {
public:
    Backoff(std::chrono::milliseconds first, std::chrono::milliseconds max) : first_(first), max_(max), next_(first) {}
    std::chrono::milliseconds next() {
        const auto d = next_;
        next_ = std::min(next_ * 2, max_);
        return d;
    }
    void reset() { next_ = first_; }

private:
    std::chrono::milliseconds first_, max_, next_;
};

// The %Q bytes a driver hands on to its peer (the loopback's next inputs, the simulated plant's
// actuators): the program's outputs, or while the safe state is latched the safe values (0 past
// them). The scan thread writes and reads it; the watchdog may latch the safe state meanwhile,
// and neither waits for the other (scan_exchange.h).
class OutputLatch {
public:
    void resize(std::size_t bytes) { exchange_.resize(bytes, bytes); }
    [[nodiscard]] std::size_t size() const { return exchange_.bytes(); }
    // The program's outputs; ignored while the safe state is latched.
    void write(std::span<const std::uint8_t> outputs) noexcept {
        if (!exchange_.accepting()) {
            return;
        }
        std::uint8_t* to = exchange_.back();
        const std::size_t n = std::min(size(), outputs.size());
        copyBytes(to, outputs.data(), n);
        if (size() > n) {
            std::memset(to + n, 0, size() - n);
        }
        exchange_.publish();
    }
    // Before start (Driver::setSafeImage): the safe values, zeros past them.
    void setSafe(std::span<const std::uint8_t> safeOutputs) { exchange_.setSafe(safeOutputs); }
    void latchSafe() noexcept { exchange_.latchSafe(); }
    void release() noexcept { exchange_.release(); }
    // Copies the held bytes into `out` (as many as both have): the safe values from the latch
    // until the first write after the release.
    void read(std::span<std::uint8_t> out) noexcept {
        const std::size_t n = std::min(size(), out.size());
        switch (exchange_.take()) {
        case OutputExchange::Source::None:
            if (n != 0) {
                std::memset(out.data(), 0, n);
            }
            break;
        case OutputExchange::Source::Program: copyBytes(out.data(), exchange_.program(), n); break;
        case OutputExchange::Source::Safe: copyBytes(out.data(), exchange_.safeImage().data(), n); break;
        }
    }

private:
    OutputExchange exchange_;
};

// Health written by a driver thread, read by any thread.
class HealthCell {
public:
    // A reason without a code gets IoError::Other; ok clears reason, code and inputsBad.
    void set(Health h, std::string reason, IoError code = IoError::Other, bool inputsBad = false);
    [[nodiscard]] HealthStatus get() const;

private:
    mutable std::mutex mutex_;
    HealthStatus status_;
};

// Bit access in a byte area; out-of-range positions are ignored (the image may be smaller
// than a map when the program uses fewer addresses).
[[nodiscard]] inline bool getBit(std::span<const std::uint8_t> area, std::uint64_t pos) {
    const std::uint64_t byte = pos / 8;
    return byte < area.size() && ((area[byte] >> (pos % 8)) & 1U) != 0;
}
inline void setBit(std::span<std::uint8_t> area, std::uint64_t pos, bool v) {
    const std::uint64_t byte = pos / 8;
    if (byte < area.size()) {
        const auto mask = static_cast<std::uint8_t>(1U << (pos % 8));
        area[byte] = v ? static_cast<std::uint8_t>(area[byte] | mask) : static_cast<std::uint8_t>(area[byte] & ~mask);
    }
}

// The byte span of `area` in a view.
[[nodiscard]] std::span<std::uint8_t> areaSpan(const ImageView& image, Area area);

// CLOCK_MONOTONIC in nanoseconds.
[[nodiscard]] std::int64_t monotonicNs();

// The bit-level extent [first, last) a map entry covers, used for overlap checks.
struct BitExtent {
    Area area = Area::Input;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
};
// Index of an extent in `all` that overlaps `e`, or -1.
[[nodiscard]] int findOverlap(const std::vector<BitExtent>& all, const BitExtent& e);
// Byte ranges covering a set of bit extents (one range per extent, not merged), all with `access`.
[[nodiscard]] std::vector<ByteRange> byteRanges(const std::vector<BitExtent>& extents, Access access = Access::Write);

} // namespace takt::io::detail
