// The modbus-rtu driver's transport: one slave on a serial line (libmodbus RTU). Everything
// else — maps, truST form, polling, comm loss, safe state — is the client engine shared with
// modbus-tcp (modbus_client.cpp).
//
// Params: device (required: "/dev/ttyUSB0", or "loop://NAME" for a simulated slave, see
// modbus_loop.h), baud (19200), parity (none|even|odd, even), data_bits (5..8, 8), stop_bits
// (1|2, 1), serial_mode (rs232|rs485, rs232), slave or unit_id (1..247, 1). The defaults are the
// Modbus serial line specification's (19200 8E1), as CODESYS's Modbus COM port takes them.
//
// Requests keep the serial line specification's silence of 3.5 character times between frames.
// Several drivers may name one device (slaves on one RS-485 bus): the port is opened once and
// shared, and they take turns on it one whole exchange at a time (a process-wide lock per
// device), with the same line settings.
#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "modbus_client.h"
#include "modbus_loop.h"
#include "registry.h"

namespace takt::io {
namespace {

using namespace detail;

// The rates libmodbus sets on Linux; it would open any other at 9600 with only a log line.
constexpr std::array kBaudRates = {110,     300,     600,     1200,    2400,    4800,    9600,    19200,
                                   38400,   57600,   115200,  230400,  460800,  500000,  576000,  921600,
                                   1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000};

// One serial line, shared by the drivers whose slaves are on it. The port is opened once and its
// descriptor lent to every driver's context: a second open of one tty in a process fails under
// libmodbus (a pseudo-terminal answers EINVAL), and two descriptors on one port would each take
// bytes meant for the other. Everything but `settings` is under `turn`.
struct Line {
    LineTurn turn;
    std::string settings;         // "19200 8E1 rs232": every driver on the line must agree
    std::int64_t quietAtNs = 0;   // when the silence after the last frame is long enough
    modbus_t* port = nullptr;     // owns the open descriptor; null while closed
    std::uint64_t generation = 0; // counts closes, so a driver closes only the port it failed on

    Line() = default;
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;
    ~Line() { closePort(); }

    void closePort() noexcept {
        if (port != nullptr) {
            modbus_close(port);
            modbus_free(port);
            port = nullptr;
            ++generation;
        }
    }
};

// The serial lines this process has open, by device path.
std::shared_ptr<Line> shareLine(const std::string& device, const std::string& settings, std::string& error) {
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<Line>> lines;
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::weakly_canonical(device, ec); // links from socat, udev
    const std::string key = ec ? device : real.string();
    const std::lock_guard lock(mutex);
    if (auto line = lines[key].lock()) {
        if (line->settings != settings) {
            error = fmt::format("modbus-rtu: {} is already in use at {} by another modbus-rtu driver; drivers "
                                "sharing a serial line need the same baud, parity, data_bits, stop_bits and "
                                "serial_mode (this one: {})",
                                device, line->settings, settings);
            return nullptr;
        }
        return line;
    }
    auto line = std::make_shared<Line>();
    line->settings = settings;
    lines[key] = line;
    return line;
}

class RtuTransport final : public ModbusTransport {
public:
    std::string_view driverName() const override { return "modbus-rtu"; }

    std::span<const std::string_view> keys() const override {
        static constexpr std::string_view kKeys[] = {"device",    "baud",        "parity", "data_bits",
                                                     "stop_bits", "serial_mode", "slave",  "unit_id"};
        return kKeys;
    }

    bool init(ParamReader& p, int& unitId) override {
        if (const auto device = p.string("device", true)) {
            device_ = *device;
            if (device_.empty()) {
                p.fail("device", "must not be empty (a serial device such as /dev/ttyUSB0, or loop://NAME)");
            } else if (device_.starts_with(kLoopScheme) && device_.size() == kLoopScheme.size()) {
                p.fail("device", "loop:// needs a name (loop://NAME)");
            }
        }
        if (const auto baud = p.integer("baud", 1, 4'000'000)) {
            if (std::find(kBaudRates.begin(), kBaudRates.end(), *baud) == kBaudRates.end()) {
                p.fail("baud", fmt::format("{} is not a standard rate (expected one of {})", *baud,
                                           fmt::join(kBaudRates, ", ")));
            }
            baud_ = static_cast<int>(*baud);
        }
        if (const auto parity = p.string("parity")) {
            static constexpr std::pair<std::string_view, char> kParities[] = {
                {"none", 'N'}, {"even", 'E'}, {"odd", 'O'}};
            const auto* it = std::find_if(std::begin(kParities), std::end(kParities),
                                          [&](const auto& e) { return e.first == *parity; });
            if (it == std::end(kParities)) {
                p.fail("parity", fmt::format("unknown parity '{}' (expected none, even or odd)", *parity));
            } else {
                parity_ = it->second;
            }
        }
        dataBits_ = static_cast<int>(p.integer("data_bits", 5, 8).value_or(8));
        stopBits_ = static_cast<int>(p.integer("stop_bits", 1, 2).value_or(1));
        if (const auto mode = p.string("serial_mode")) {
            if (*mode != "rs232" && *mode != "rs485") {
                p.fail("serial_mode", fmt::format("unknown mode '{}' (expected rs232 or rs485)", *mode));
            }
            rs485_ = *mode == "rs485";
        }
        if (p.has("slave") && p.has("unit_id")) {
            p.fail("unit_id", "give either slave or unit_id (the same thing), not both");
        }
        // 0 is the broadcast address: nothing answers it, so no input could ever be read.
        const char* key = p.has("unit_id") ? "unit_id" : "slave";
        unitId_ = static_cast<int>(p.integer(key, 1, 247).value_or(1));
        unitId = unitId_;
        return p.ok();
    }

    bool start(std::string& error) override {
        if (device_.starts_with(kLoopScheme)) {
            loop_ = std::make_unique<LoopSlave>();
            if (!loop_->start(unitId_, error)) {
                error = fmt::format("modbus-rtu: {}: {}", device_, error);
                loop_.reset();
                return false;
            }
            path_ = loop_->device();
            line_ = std::make_shared<Line>(); // a simulated slave of its own: no line to share
            return true;
        }
        path_ = device_;
        line_ = shareLine(device_,
                          fmt::format("{} {}{}{} {}", baud_, dataBits_, parity_, stopBits_, rs485_ ? "rs485" : "rs232"),
                          error);
        return line_ != nullptr;
    }

    modbus_t* newContext(std::string& error) override {
        modbus_t* ctx = modbus_new_rtu(path_.c_str(), baud_, parity_, dataBits_, stopBits_);
        if (ctx == nullptr) {
            error = fmt::format("modbus-rtu: cannot create a context for {}: {}", device_, modbus_strerror(errno));
        }
        return ctx;
    }

    bool open(modbus_t* ctx, std::string& why) override {
        const std::lock_guard turn(line_->turn);
        if (line_->port == nullptr) {
            modbus_t* port = modbus_new_rtu(path_.c_str(), baud_, parity_, dataBits_, stopBits_);
            if (port == nullptr || modbus_connect(port) != 0) {
                why = fmt::format("cannot open serial device {}: {}", device_, modbus_strerror(errno));
                modbus_free(port);
                return false;
            }
            if (rs485_ && modbus_rtu_set_serial_mode(port, MODBUS_RTU_RS485) != 0) {
                why = fmt::format("cannot switch {} to RS-485 mode: {}", device_, modbus_strerror(errno));
                modbus_close(port);
                modbus_free(port);
                return false;
            }
            line_->port = port;
        }
        modbus_set_socket(ctx, modbus_get_socket(line_->port));
        generation_ = line_->generation;
        return true;
    }

    // A timeout, a CRC error or an exception is the slave's trouble: the port stays open for the
    // others on the line. An error of the port itself (the USB adapter unplugged) closes it for
    // every driver on it; each opens it again through its reconnect back-off.
    void close(modbus_t* ctx, int lastErrno) override {
        modbus_set_socket(ctx, -1); // the descriptor is the line's, not this context's
        if (lastErrno != 0 && lastErrno != ETIMEDOUT && lastErrno < MODBUS_ENOBASE) {
            const std::lock_guard turn(line_->turn);
            if (generation_ == line_->generation) {
                line_->closePort();
            }
        }
    }

    // A reply that arrived after its request timed out would be taken for the next one's.
    void beforeExchange(modbus_t* ctx) override { modbus_flush(ctx); }

    // The serial line specification separates frames by 3.5 character times of silence (a fixed
    // 1750 us above 19200 baud); a slave may take a request sent sooner for the tail of the last.
    void beforeRequest() override {
        if (const std::int64_t wait = line_->quietAtNs - monotonicNs(); wait > 0) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
        }
    }
    void afterRequest() override { line_->quietAtNs = monotonicNs() + frameGapNs(); }

    LineTurn* line() override { return line_ ? &line_->turn : nullptr; }

    void stop() noexcept override {
        if (loop_) {
            loop_->stop();
            loop_.reset();
        }
        line_.reset();
    }

private:
    [[nodiscard]] std::int64_t frameGapNs() const {
        if (baud_ > 19200) {
            return 1'750'000;
        }
        const int bitsPerChar = 1 + dataBits_ + (parity_ == 'N' ? 0 : 1) + stopBits_;
        return std::int64_t{bitsPerChar} * 3'500'000'000 / baud_;
    }

    std::string device_; // as configured
    std::string path_;   // what is opened: device_, or the simulated slave's pseudo-terminal
    int baud_ = 19200;
    char parity_ = 'E';
    int dataBits_ = 8;
    int stopBits_ = 1;
    bool rs485_ = false;
    int unitId_ = 1;
    std::unique_ptr<LoopSlave> loop_;
    std::shared_ptr<Line> line_;
    std::uint64_t generation_ = 0; // the line's, when this driver's context was lent the port
};

} // namespace

std::unique_ptr<Driver> detail::makeModbusRtu() {
    return makeModbusClient(std::make_unique<RtuTransport>());
}

} // namespace takt::io
