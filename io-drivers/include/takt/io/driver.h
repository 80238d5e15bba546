#pragma once
// The driver API: how field I/O meets the process image (CONFIG.md "io.toml", ARCHITECTURE.md
// "Threads").
//
// The scan thread owns three byte areas, %I, %Q and %M. Each driver lists the byte ranges it
// writes (it owns them: two drivers never write the same bytes) and those it only reads (any
// number of drivers may read the same outputs), and exchanges with the scan thread
// through buffers of its own: readInputs()/writeOutputs() copy between the scan thread's image
// and the driver's own buffers and never block, never allocate, never throw, and take no lock
// (a task of any priority may preempt the driver's thread while it holds one). A networked
// driver talks to its peer on its own thread and hands buffers over through lock-free triple
// buffers (io-drivers/src/scan_exchange.h).
//
// Life cycle, all calls from one control thread except where marked:
//   create (registry) -> init (parse params, allocate) -> start (threads, sockets)
//   -> [scan thread: readInputs / writeOutputs every cycle]
//   -> stop (join threads; idempotent).
// applySafeState() may be called from any thread (the watchdog calls it while the scan thread
// may be stuck inside the VM), so it must be thread-safe against writeOutputs(), and it must not
// wait for anything either: the scan thread latches the safe state too (scan_exchange.h).
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace takt::io {

enum class Area : std::uint8_t { Input, Output, Memory }; // %I, %Q, %M

// What a driver does with a range of the image: writes it (inputs from the field, a master's
// writes) or only reads it (outputs it drives, publishes or serves).
enum class Access : std::uint8_t { Write, Read };

// A byte range of one area; what a driver uses, or what a safe-state entry touches.
struct ByteRange {
    Area area = Area::Input;
    std::uint32_t first = 0; // byte offset in the area (address mode already applied)
    std::uint32_t count = 0; // bytes
    Access access = Access::Write;
    // truST's whole-image input forms (mqtt topic_in, modbus-tcp input_start without maps),
    // which its example projects pair on the same %IB0..: see sharedWholeImage.
    bool wholeImage = false;
};

// Whether two ranges share a byte (same area, both non-empty).
[[nodiscard]] constexpr bool rangesOverlap(const ByteRange& a, const ByteRange& b) noexcept {
    return a.area == b.area && a.count != 0 && b.count != 0 &&
           std::uint64_t{a.first} < std::uint64_t{b.first} + b.count &&
           std::uint64_t{b.first} < std::uint64_t{a.first} + a.count;
}

// The one ownership rule that `takt validate` and the running DriverSet apply between two
// drivers' ranges: only writers own image bytes, so two writers of one byte clash, while a
// driver that only reads bytes (outputs on a field, an MQTT publish, %Q served to masters)
// shares them with any other. The bytes both write, or an empty range (count 0) when none.
[[nodiscard]] constexpr ByteRange writeClash(const ByteRange& a, const ByteRange& b) noexcept {
    if (a.access != Access::Write || b.access != Access::Write || !rangesOverlap(a, b)) {
        return ByteRange{a.area, 0, 0};
    }
    const std::uint32_t first = a.first > b.first ? a.first : b.first;
    const std::uint64_t endA = std::uint64_t{a.first} + a.count;
    const std::uint64_t endB = std::uint64_t{b.first} + b.count;
    return ByteRange{a.area, first, static_cast<std::uint32_t>((endA < endB ? endA : endB) - first)};
}

// Whether a clash between `a` and `b` is accepted with a warning instead of refused: both are
// truST whole-image writers, each writing only what it received in a cycle, so the driver later
// in io.toml's list (read later in the cycle) wins for the bytes it writes.
[[nodiscard]] constexpr bool sharedWholeImage(const ByteRange& a, const ByteRange& b) noexcept {
    return a.wholeImage && b.wholeImage;
}

enum class Health : std::uint8_t { Ok, Degraded, Faulted };
[[nodiscard]] std::string_view healthName(Health h) noexcept; // "ok" | "degraded" | "faulted"

// Why a driver is not ok, as the number its status block gives the program (docs/io-drivers.md
// "Driver status" lists them; the numbers are stable). The text is HealthStatus::reason.
enum class IoError : std::uint16_t {
    None = 0,           // ok
    Other = 1,          // see the reason (takt status)
    Connecting = 2,     // not connected yet, or reconnecting after a failure
    ConnectFailed = 3,  // the peer refused or is unreachable
    Timeout = 4,        // the peer did not answer within timeout_ms
    PeerException = 5,  // the peer answered with an error (a Modbus exception)
    ConnectionLost = 6, // the connection broke (reset, closed by the peer)
    CommLost = 7,       // no good exchange for comm_loss_timeout_ms: inputs bad
    DeviceError = 8,    // the local device failed (serial port, GPIO chip)
};

struct HealthStatus {
    Health health = Health::Ok;
    std::string reason;           // empty when ok
    IoError code = IoError::None; // None exactly when ok (HealthCell sets Other for a reason without one)
    bool inputsBad = false;       // the inputs this driver writes are not values from the field (read as 0)
};

struct SimulationScript; // simulation.h

// Where a driver's params came from, so every error names file, line and key.
struct ParamSource {
    std::string file;      // io.toml or the board file
    std::string keyPrefix; // e.g. "io.params" or "io.drivers[1].params"
};

// One configured driver instance: its registry name and raw params table.
struct DriverSpec {
    std::string name; // "loopback", "simulated", "modbus-tcp", "modbus-server", "mqtt", "gpio"
    toml::table params;
    ParamSource source;
    std::uint32_t line = 0; // where the driver entry starts
    std::uint32_t column = 0;
    // runtime.toml [build] address_mode = "byte": %IW1 is byte 1, not byte 2 (drivers that take
    // direct addresses in their params resolve them with it).
    bool byteAddressing = false;
    // The project's simulation.toml, for a `simulated` driver without a plant (selectIoConfig
    // attaches it); null otherwise.
    std::shared_ptr<const SimulationScript> simulation;
    // The entry's `status` key: where the driver's status block goes in %I or %M (count
    // kStatusBlockBytes), or count 0 when the program does not ask for it.
    ByteRange status;
    std::uint32_t statusLine = 0; // where the key is
    std::uint32_t statusColumn = 0;
};

// The status block (docs/io-drivers.md "Driver status"), little-endian like the whole image:
//   byte 0   bit 0 ok (health ok), bit 1 bad (inputs not from the field), bit 2 faulted
//   byte 1   health: 0 ok, 1 degraded, 2 faulted                               (USINT)
//   byte 2   error code (IoError)                                                (UINT)
//   byte 4   scan cycles since the last good exchange, saturating               (UDINT)
inline constexpr std::uint32_t kStatusBlockBytes = 8;

// Per-cycle view of the scan thread's process image.
struct ImageView {
    std::span<std::uint8_t> inputs;   // %I
    std::span<std::uint8_t> outputs;  // %Q
    std::span<std::uint8_t> memory;   // %M
    std::int64_t cycleStartNs = 0;    // CLOCK_MONOTONIC (or the virtual clock)
    std::int64_t cycleIntervalNs = 0; // nominal base period
};

class Driver {
public:
    virtual ~Driver() = default;

    [[nodiscard]] virtual std::string_view name() const noexcept = 0;

    // Parses and checks params (every error names the key: "io.params.plant: unknown plant
    // 'x'"), sizes buffers, and reports the byte ranges it writes and reads (ByteRange::access).
    // Nothing is opened yet.
    // False with `error` filled on bad params.
    virtual bool init(const DriverSpec& spec, std::string& error) = 0;
    [[nodiscard]] virtual std::vector<ByteRange> ownedRanges() const = 0;

    // Opens devices/sockets and starts the driver's thread if it has one. A peer that is not
    // reachable yet is not an error: health goes to degraded and the driver retries.
    virtual bool start(std::string& error) = 0;

    // Scan thread, at cycle start: copy the freshest inputs into the owned input/memory bytes.
    virtual void readInputs(ImageView image) noexcept = 0;
    // Scan thread, at cycle end: take this cycle's outputs from the owned output/memory bytes.
    virtual void writeOutputs(ImageView image) noexcept = 0;

    // Any thread. Drive every owned output to `safeOutputs` (the whole %Q area with io.toml's
    // [[io.safe_state]] applied, zeros elsewhere) and latch: writeOutputs() is ignored until
    // releaseSafeState(). A driver with its own per-driver safe state applies that on top.
    // `safeOutputs` is the image setSafeImage() got: the drivers in this tree send what they
    // stored there and only latch here, so two threads latching at once copy nothing.
    virtual void applySafeState(std::span<const std::uint8_t> safeOutputs) noexcept = 0;
    virtual void releaseSafeState() noexcept = 0;

    // Control thread, after init() and before start(): the same safe image applySafeState()
    // gets, handed over up front so a driver that loses its peer on its own (comm loss after
    // comm_loss_timeout_ms) drives the configured safe values, not zeros, and so that
    // applySafeState() has nothing to copy. A driver stores what it needs, in its own layout;
    // the default ignores it (a driver without outputs).
    virtual void setSafeImage(std::span<const std::uint8_t> safeOutputs) { (void)safeOutputs; }

    // Any thread.
    [[nodiscard]] virtual HealthStatus health() const = 0;
    // Any thread, lock-free: the number of exchanges with the peer that succeeded so far (the
    // status block counts the cycles since the last one). Only a driver that counts them says
    // so; for the others the status block counts the cycles since health was last ok.
    [[nodiscard]] virtual bool countsExchanges() const noexcept { return false; }
    // Scan thread, after readInputs(): whether the inputs it just wrote are bad (not from the
    // field), taken from the same hand-over as the values, so the status block's bad flag never
    // lags or leads them. Empty for a driver that says so only through health().
    [[nodiscard]] virtual std::optional<bool> inputsBadThisCycle() const noexcept { return std::nullopt; }
    [[nodiscard]] std::uint64_t goodExchanges() const noexcept {
        return goodExchanges_.load(std::memory_order_acquire);
    }
    // Any thread: true when the driver was told to fail closed (`on_error = "fault"`): while its
    // health is faulted the runtime faults, under [runtime.fault] policy, and every driver puts
    // its safe state on the field. Otherwise a faulted driver only reports it.
    [[nodiscard]] virtual bool failsClosed() const noexcept { return false; }

    virtual void stop() noexcept = 0;

protected:
    // Driver thread: one more exchange succeeded (countsExchanges()).
    void countGoodExchange() noexcept { goodExchanges_.fetch_add(1, std::memory_order_release); }

private:
    std::atomic<std::uint64_t> goodExchanges_{0};
};

// The registry: every driver name docs/io-drivers.md lists. Unknown name -> nullptr.
[[nodiscard]] std::unique_ptr<Driver> createDriver(std::string_view name);
[[nodiscard]] std::vector<std::string_view> driverNames();

} // namespace takt::io
