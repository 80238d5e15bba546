// The Modbus client engine (CONFIG.md "io.toml") of the modbus-tcp and modbus-rtu drivers: polls
// one peer with libmodbus on its own thread and exchanges with the scan thread through triple
// buffers, without a lock (scan_exchange.h). The transport (modbus_tcp.cpp, modbus_rtu.cpp)
// only reaches the peer.
//
// Params beside the transport's: timeout_ms (per request and connect, 500), poll_ms (10),
// on_error (fault|warn|ignore, fault), comm_loss_timeout_ms (1000), reconnect_ms (first
// back-off, 100), reconnect_max_ms (5000); maps `inputs = [{area, start, count, address}]` (any
// of the four tables into %I or %M) and `outputs = [{area, start, count, address}]` (coils /
// holding registers from %Q or %M). Without maps, the truST form applies: input registers
// input_start.. (input_count, 8) -> %IW0.. and %QW0.. -> holding registers output_start..
// (output_count, 8).
//
// Each poll writes every output map (so a restarted peer gets the outputs back at once) and then
// reads every input map; requests are split at libmodbus's protocol limits (125 registers read,
// 123 written, 2000 bits read, 1968 written). Byte order: see modbus_map.h.
//
// Communication loss: a failed request closes the connection and the thread reconnects with
// exponential back-off. Health follows on_error (driver_support.h). Once nothing has succeeded
// for comm_loss_timeout_ms, the inputs are marked bad: the driver's input bytes read as zero
// every cycle, health says "inputs bad" (degraded, or faulted under on_error = fault), and the
// driver's safe state is applied: the outputs sent to the peer become io.toml's
// [[io.safe_state]] values (handed over by setSafeImage before start; zeros where no entry
// says otherwise) and stay so until the first complete poll after reconnecting has written
// them; from the poll after that the program's outputs flow again and health returns to ok.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>

#include "modbus_client.h"
#include "modbus_map.h"
#include "wakeup.h"
#include <fmt/format.h>

namespace takt::io {
namespace {

using namespace detail;
using namespace std::chrono_literals;

constexpr ModbusTable kInputTables[] = {ModbusTable::Coils, ModbusTable::DiscreteInputs, ModbusTable::InputRegisters,
                                        ModbusTable::HoldingRegisters};
constexpr ModbusTable kOutputTables[] = {ModbusTable::Coils, ModbusTable::HoldingRegisters};
constexpr Area kInputAreas[] = {Area::Input, Area::Memory};
constexpr Area kOutputAreas[] = {Area::Output, Area::Memory};

// Values of a set of maps, flattened: bit maps into `bits`, register maps into `regs`.
struct Values {
    std::vector<std::uint8_t> bits;
    std::vector<std::uint16_t> regs;
    void zero() {
        std::fill(bits.begin(), bits.end(), 0);
        std::fill(regs.begin(), regs.end(), 0);
    }
    // As bytes in an exchange slot: the bits, then the registers in host order.
    [[nodiscard]] std::size_t bytes() const { return bits.size() + 2 * regs.size(); }
    void pack(std::uint8_t* to) const noexcept {
        copyBytes(to, bits.data(), bits.size());
        copyBytes(to + bits.size(), regs.data(), 2 * regs.size());
    }
    void unpack(const std::uint8_t* from) noexcept {
        copyBytes(bits.data(), from, bits.size());
        copyBytes(regs.data(), from + bits.size(), 2 * regs.size());
    }
};

struct Layout {
    std::vector<ModbusMap> maps;
    std::vector<std::size_t> offsets; // into Values::bits or ::regs, per map

    Values make() {
        Values v;
        std::size_t bits = 0;
        std::size_t regs = 0;
        offsets.clear();
        for (const ModbusMap& m : maps) {
            std::size_t& n = isBitTable(m.table) ? bits : regs;
            offsets.push_back(n);
            n += m.count;
        }
        v.bits.assign(bits, 0);
        v.regs.assign(regs, 0);
        return v;
    }
};

class ModbusClient final : public Driver {
public:
    explicit ModbusClient(std::unique_ptr<ModbusTransport> transport) : transport_(std::move(transport)) {}
    ~ModbusClient() override { stop(); }

    std::string_view name() const noexcept override { return transport_->driverName(); }

    bool init(const DriverSpec& spec, std::string& error) override {
        ParamReader p(spec.params, spec.source.keyPrefix, error);
        static constexpr std::string_view kCommon[] = {
            "timeout_ms",   "poll_ms", "on_error", "input_start",          "output_start", "input_count",
            "output_count", "inputs",  "outputs",  "comm_loss_timeout_ms", "reconnect_ms", "reconnect_max_ms"};
        std::vector<std::string_view> known(transport_->keys().begin(), transport_->keys().end());
        known.insert(known.end(), std::begin(kCommon), std::end(kCommon));
        if (!p.onlyKeys(known, fmt::format("the {} driver", transport_->driverName())) ||
            !transport_->init(p, unitId_)) {
            return false;
        }
        timeoutMs_ = p.integer("timeout_ms", 1, 60000).value_or(500);
        pollMs_ = p.integer("poll_ms", 1, 60000).value_or(10);
        commLossMs_ = p.integer("comm_loss_timeout_ms", 0, 3'600'000).value_or(1000);
        reconnectMs_ = p.integer("reconnect_ms", 1, 60000).value_or(100);
        reconnectMaxMs_ = p.integer("reconnect_max_ms", 1, 600000).value_or(5000);
        if (!parseOnError(p, onError_)) {
            return false;
        }
        if (p.ok() && reconnectMaxMs_ < reconnectMs_) {
            p.fail("reconnect_max_ms", fmt::format("must be at least reconnect_ms ({})", reconnectMs_));
        }
        const bool explicitMaps = p.has("inputs") || p.has("outputs");
        trustForm_ = !explicitMaps;
        for (std::string_view key : {"input_start", "output_start", "input_count", "output_count"}) {
            if (explicitMaps && p.has(key)) {
                p.fail(key, "belongs to the truST form; with explicit inputs/outputs maps give `start` per map");
            }
        }
        if (!p.ok()) {
            return false;
        }
        if (explicitMaps) {
            if (!readModbusMaps(p, "inputs", "area", kInputTables, kInputAreas, spec.byteAddressing, inMaps_.maps) ||
                !readModbusMaps(p, "outputs", "area", kOutputTables, kOutputAreas, spec.byteAddressing,
                                outMaps_.maps)) {
                return false;
            }
        } else {
            const auto inStart = p.integer("input_start", 0, 65535).value_or(0);
            const auto outStart = p.integer("output_start", 0, 65535).value_or(0);
            const auto inCount = p.integer("input_count", 0, 4096).value_or(8);
            const auto outCount = p.integer("output_count", 0, 4096).value_or(8);
            if (!p.ok()) {
                return false;
            }
            if (inStart + inCount > 65536) {
                return p.fail("input_count", "input_start + input_count runs past Modbus address 65535");
            }
            if (outStart + outCount > 65536) {
                return p.fail("output_count", "output_start + output_count runs past Modbus address 65535");
            }
            const auto word0 = [](Area a) {
                ImageAddress w;
                w.area = a;
                w.sizeLetter = 'W';
                w.size = 2;
                return w;
            };
            if (inCount > 0) {
                inMaps_.maps.push_back({ModbusTable::InputRegisters, static_cast<std::uint32_t>(inStart),
                                        static_cast<std::uint32_t>(inCount), word0(Area::Input)});
            }
            if (outCount > 0) {
                outMaps_.maps.push_back({ModbusTable::HoldingRegisters, static_cast<std::uint32_t>(outStart),
                                         static_cast<std::uint32_t>(outCount), word0(Area::Output)});
            }
        }
        if (!checkNoOverlap(p, "inputs", inMaps_.maps) || !checkNoOverlap(p, "outputs", outMaps_.maps)) {
            return false;
        }
        inScan_ = inMaps_.make();
        inPoll_ = inMaps_.make();
        outScan_ = outMaps_.make();
        outPoll_ = outMaps_.make();
        in_.resize(kInHeader + inPoll_.bytes());
        out_.resize(outPoll_.bytes(), outPoll_.bytes()); // the safe values in the outputs' layout
        return true;
    }

    // Input maps write the image; output maps only read it (what the peer is sent).
    std::vector<ByteRange> ownedRanges() const override {
        std::vector<ByteRange> r;
        for (const auto* layout : {&inMaps_, &outMaps_}) {
            std::vector<BitExtent> e;
            for (const ModbusMap& m : layout->maps) {
                e.push_back(m.extent());
            }
            auto part = byteRanges(e, layout == &inMaps_ ? Access::Write : Access::Read);
            for (ByteRange& b : part) {
                b.wholeImage = trustForm_ && b.access == Access::Write;
            }
            r.insert(r.end(), part.begin(), part.end());
        }
        return r;
    }

    bool start(std::string& error) override {
        if (!transport_->start(error)) {
            return false;
        }
        ctx_ = transport_->newContext(error);
        if (ctx_ == nullptr) {
            transport_->stop();
            return false;
        }
        modbus_set_slave(ctx_, unitId_);
        const auto t = static_cast<std::uint32_t>(timeoutMs_);
        modbus_set_response_timeout(ctx_, t / 1000, (t % 1000) * 1000);
        modbus_set_byte_timeout(ctx_, t / 1000, (t % 1000) * 1000);
        modbus_set_error_recovery(ctx_, MODBUS_ERROR_RECOVERY_NONE);
        lastGoodNs_ = monotonicNs();
        // Until the first poll the inputs are zeros, not the field's values: bad.
        inPoll_.zero();
        publishInputs(inPoll_, true);
        health_.set(Health::Degraded, "connecting", IoError::Connecting, true);
        stopping_ = false;
        thread_ = std::thread([this] { run(); });
        return true;
    }

    void readInputs(ImageView image) noexcept override {
        if (in_.size() == 0) {
            return; // not initialised
        }
        in_.refresh();
        inBad_ = in_.front()[0] != 0;
        inScan_.unpack(in_.front() + kInHeader);
        for (std::size_t i = 0; i < inMaps_.maps.size(); ++i) {
            const ModbusMap& m = inMaps_.maps[i];
            const std::span<std::uint8_t> area = areaSpan(image, m.address.area);
            if (isBitTable(m.table)) {
                bitsToImage(m, std::span(inScan_.bits).subspan(inMaps_.offsets[i], m.count), area);
            } else {
                regsToImage(m, std::span(inScan_.regs).subspan(inMaps_.offsets[i], m.count), area);
            }
        }
    }

    void writeOutputs(ImageView image) noexcept override {
        if (!out_.accepting()) {
            return;
        }
        for (std::size_t i = 0; i < outMaps_.maps.size(); ++i) {
            const ModbusMap& m = outMaps_.maps[i];
            const std::span<std::uint8_t> area = areaSpan(image, m.address.area);
            if (isBitTable(m.table)) {
                imageToBits(m, area, std::span(outScan_.bits).subspan(outMaps_.offsets[i], m.count));
            } else {
                imageToRegs(m, area, std::span(outScan_.regs).subspan(outMaps_.offsets[i], m.count));
            }
        }
        outScan_.pack(out_.back());
        out_.publish();
    }

    // The values a comm loss sends (checkCommLoss), known from the start rather than only once
    // the runtime latched the safe state.
    // Converted once here to the values of the output maps (maps from %M stay zero), so the
    // driver's thread sends them as they are.
    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override {
        std::vector<std::uint8_t> outputs(safeOutputs.begin(), safeOutputs.end());
        const ImageView view{{}, outputs, {}};
        Values safe = outMaps_.make();
        for (std::size_t i = 0; i < outMaps_.maps.size(); ++i) {
            const ModbusMap& m = outMaps_.maps[i];
            const std::span<std::uint8_t> area = areaSpan(view, m.address.area);
            if (isBitTable(m.table)) {
                imageToBits(m, area, std::span(safe.bits).subspan(outMaps_.offsets[i], m.count));
            } else {
                imageToRegs(m, area, std::span(safe.regs).subspan(outMaps_.offsets[i], m.count));
            }
        }
        std::vector<std::uint8_t> packed(safe.bytes());
        safe.pack(packed.data());
        out_.setSafe(packed);
    }

    void applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept override {
        out_.latchSafe();
        wake_.notify(); // write the safe values now rather than at the next poll
    }

    void releaseSafeState() noexcept override { out_.release(); }

    HealthStatus health() const override { return health_.get(); }
    std::optional<bool> inputsBadThisCycle() const noexcept override { return inBad_; }
    bool countsExchanges() const noexcept override { return true; }
    bool failsClosed() const noexcept override { return onError_ == OnError::Fault; }

    void stop() noexcept override {
        stopping_ = true;
        wake_.notify();
        if (thread_.joinable()) {
            thread_.join();
        }
        if (ctx_ != nullptr) {
            transport_->close(ctx_, 0);
            modbus_free(ctx_);
            ctx_ = nullptr;
        }
        transport_->stop();
    }

private:
    // Driver thread: hands the inputs just read (or zeros) to the scan thread, with whether they
    // are bad in the same slot: [bad, 7 bytes 0] | values.
    void publishInputs(const Values& v, bool bad) noexcept {
        std::memset(in_.back(), 0, kInHeader);
        in_.back()[0] = bad ? 1 : 0;
        v.pack(in_.back() + kInHeader);
        in_.publish();
    }

    // Driver thread -------------------------------------------------------------------------
    void run() {
        Backoff backoff{std::chrono::milliseconds(reconnectMs_), std::chrono::milliseconds(reconnectMaxMs_)};
        bool connected = false;
        while (!stopRequested()) {
            if (!connected) {
                if (std::string why; !transport_->open(ctx_, why)) {
                    commError(why, IoError::ConnectFailed);
                    waitUntil(monotonicNs() + std::chrono::nanoseconds(backoff.next()).count(), false);
                    continue;
                }
                connected = true;
            }
            std::string failure;
            if (!pollOnce(failure)) {
                transport_->close(ctx_, lastErrno_);
                connected = false;
                commError(failure, errorCode(lastErrno_));
                waitUntil(monotonicNs() + std::chrono::nanoseconds(backoff.next()).count(), false);
                continue;
            }
            backoff.reset();
            waitUntil(monotonicNs() + pollMs_ * 1'000'000, true);
        }
        // The runtime latches the safe state right before it stops the drivers (SIGTERM, --for,
        // a halt): the stop can win the race against the poll that was woken to write it, so
        // the safe values go out here rather than leaving the peer with the program's outputs.
        if (connected) {
            writeLatchedSafeState();
        }
    }

    void writeLatchedSafeState() {
        (void)out_.take();
        if (!out_.latched()) {
            return;
        }
        outPoll_.unpack(out_.safeImage().data());
        const std::unique_lock<LineTurn> turn = takeTurn();
        std::string failure;
        for (std::size_t i = 0; i < outMaps_.maps.size(); ++i) {
            if (!transfer(outMaps_.maps[i], outMaps_.offsets[i], outPoll_, true, failure)) {
                return; // the peer is gone: nothing more to do on the way out
            }
        }
    }

    bool stopRequested() const { return stopping_.load(std::memory_order_acquire); }

    // Sleeps until `deadlineNs` (or stop), checking the communication-loss timeout meanwhile.
    // Connected (`safeWakes`), a safe state latched since the last poll ends the wait: it is
    // written at once.
    void waitUntil(std::int64_t deadlineNs, bool safeWakes) {
        while (!stopRequested()) {
            const std::int64_t now = monotonicNs();
            if (now >= deadlineNs) {
                return;
            }
            checkCommLoss(now);
            const std::uint32_t seen = wake_.epoch();
            if ((safeWakes && out_.latches() != latchesPolled_) || stopRequested()) {
                return;
            }
            wake_.waitFor(seen, std::chrono::nanoseconds(std::min<std::int64_t>(deadlineNs - now, 20'000'000)));
        }
    }

    // One exchange: all output maps, then all input maps. False with `failure` on any error.
    bool pollOnce(std::string& failure) {
        latchesPolled_ = out_.latches();
        const OutputExchange::Source source = out_.take();
        const bool writingSafe = commLossSafe_ || source == OutputExchange::Source::Safe;
        if (writingSafe) {
            outPoll_.unpack(out_.safeImage().data());
        } else if (source == OutputExchange::Source::Program) {
            outPoll_.unpack(out_.program());
        }
        // Nothing is written before the first cycle's outputs.
        if (!exchange(source != OutputExchange::Source::None || commLossSafe_, failure)) {
            return false;
        }
        publishInputs(inPoll_, false);
        lastGoodNs_ = monotonicNs();
        errorEpisode_ = false;
        if (commLossSafe_ && writingSafe) {
            commLossSafe_ = false; // the safe values reached the peer; the program's flow next poll
        }
        everGood_ = true;
        health_.set(Health::Ok, {});
        countGoodExchange();
        return true;
    }

    // Drivers sharing a serial line hold it for a whole exchange, so requests never interleave.
    std::unique_lock<LineTurn> takeTurn() {
        std::unique_lock<LineTurn> turn;
        if (LineTurn* line = transport_->line(); line != nullptr) {
            turn = std::unique_lock(*line);
        }
        transport_->beforeExchange(ctx_);
        return turn;
    }

    // The outputs (when `write`), then the inputs, as one turn on the line.
    bool exchange(bool write, std::string& failure) {
        const std::unique_lock<LineTurn> turn = takeTurn();
        for (std::size_t i = 0; write && i < outMaps_.maps.size(); ++i) {
            if (!transfer(outMaps_.maps[i], outMaps_.offsets[i], outPoll_, true, failure)) {
                return false;
            }
        }
        for (std::size_t i = 0; i < inMaps_.maps.size(); ++i) {
            if (!transfer(inMaps_.maps[i], inMaps_.offsets[i], inPoll_, false, failure)) {
                return false;
            }
        }
        return true;
    }

    // One map, split at the protocol limits of its function code.
    bool transfer(const ModbusMap& m, std::size_t offset, Values& v, bool write, std::string& failure) {
        const bool bits = isBitTable(m.table);
        int limit = 0;
        if (bits) {
            limit = write ? MODBUS_MAX_WRITE_BITS : MODBUS_MAX_READ_BITS;
        } else {
            limit = write ? MODBUS_MAX_WRITE_REGISTERS : MODBUS_MAX_READ_REGISTERS;
        }
        for (std::uint32_t done = 0; done < m.count;) {
            const int n = static_cast<int>(std::min<std::uint32_t>(m.count - done, static_cast<std::uint32_t>(limit)));
            const int addr = static_cast<int>(m.start + done);
            std::uint8_t* b = bits ? v.bits.data() + offset + done : nullptr;
            std::uint16_t* r = bits ? nullptr : v.regs.data() + offset + done;
            int rc = -1;
            transport_->beforeRequest();
            switch (m.table) {
            case ModbusTable::Coils:
                rc = write ? modbus_write_bits(ctx_, addr, n, b) : modbus_read_bits(ctx_, addr, n, b);
                break;
            case ModbusTable::DiscreteInputs: rc = modbus_read_input_bits(ctx_, addr, n, b); break;
            case ModbusTable::InputRegisters: rc = modbus_read_input_registers(ctx_, addr, n, r); break;
            case ModbusTable::HoldingRegisters:
                rc = write ? modbus_write_registers(ctx_, addr, n, r) : modbus_read_registers(ctx_, addr, n, r);
                break;
            }
            const int err = errno;
            transport_->afterRequest();
            if (rc != n) {
                lastErrno_ = rc < 0 ? err : 0;
                failure = fmt::format("{} {} {}..{} failed: {}", write ? "writing" : "reading", tableName(m.table),
                                      addr, addr + n - 1, rc < 0 ? modbus_strerror(err) : "short response");
                return false;
            }
            done += static_cast<std::uint32_t>(n);
        }
        return true;
    }

    // The status block's code for a failed request's errno (0: a short response).
    static IoError errorCode(int err) {
        if (err >= MODBUS_ENOBASE) {
            return err - MODBUS_ENOBASE < 64 ? IoError::PeerException : IoError::Other; // EMBX*: an exception
        }
        switch (err) {
        case ETIMEDOUT: return IoError::Timeout;
        case ECONNRESET:
        case ECONNABORTED:
        case EPIPE:
        case EBADF:
        case ENOTCONN: return IoError::ConnectionLost;
        case ECONNREFUSED:
        case EHOSTUNREACH:
        case ENETUNREACH: return IoError::ConnectFailed;
        case EIO: return IoError::DeviceError;
        default: return IoError::Other;
        }
    }

    void commError(const std::string& why, IoError code) {
        lastError_ = why;
        errorEpisode_ = true;
        if (!checkCommLoss(monotonicNs())) {
            // Until comm loss the inputs keep the last values read; before any, they are zeros.
            if (onError_ == OnError::Fault) {
                health_.set(Health::Faulted, why, code, !everGood_);
            } else if (onError_ == OnError::Warn) {
                health_.set(Health::Degraded, why, code, !everGood_);
            }
        }
    }

    // True when communication counts as lost (and the consequences are in force).
    bool checkCommLoss(std::int64_t now) {
        if (!errorEpisode_ || now - lastGoodNs_ < commLossMs_ * 1'000'000) {
            return false;
        }
        if (!commLossSafe_) {
            inPoll_.zero();
            publishInputs(inPoll_, true);
            commLossSafe_ = true;
        }
        const std::string reason =
            fmt::format("communication lost for {} ms ({}); inputs bad (read as 0), safe state applied",
                        (now - lastGoodNs_) / 1'000'000, lastError_);
        health_.set(onError_ == OnError::Fault ? Health::Faulted : Health::Degraded, reason, IoError::CommLost, true);
        return true;
    }

    // Config
    std::unique_ptr<ModbusTransport> transport_;
    int unitId_ = 1;
    std::int64_t timeoutMs_ = 500, pollMs_ = 10, commLossMs_ = 1000, reconnectMs_ = 100, reconnectMaxMs_ = 5000;
    OnError onError_ = OnError::Warn; // CODESYS: a bus error does not stop the PLC
    bool trustForm_ = false;          // input_start/output_start, no maps: its input range is a whole-image one
    Layout inMaps_, outMaps_;

    // Shared between the scan thread (and the watchdog) and the driver thread without a lock
    // (scan_exchange.h): the values of the input maps one way, of the output maps the other.
    TripleBuffer in_;
    OutputExchange out_;
    Wakeup wake_; // a safe state to write at once, or the stop
    std::atomic<bool> stopping_{false};

    // Scan thread only.
    Values inScan_, outScan_;
    bool inBad_ = false; // the inputs of this cycle are bad (the slot's flag)
    static constexpr std::size_t kInHeader = 8;

    // Driver thread only.
    Values inPoll_, outPoll_;
    std::uint64_t latchesPolled_ = 0; // out_.latches() at the last poll
    bool commLossSafe_ = false;       // comm loss: the safe values go out until a poll has written them
    bool errorEpisode_ = false;
    std::int64_t lastGoodNs_ = 0;
    std::string lastError_;
    bool everGood_ = false; // a poll has succeeded since start
    modbus_t* ctx_ = nullptr;
    int lastErrno_ = 0; // the last failed request's, for the transport's close()
    std::thread thread_;
    HealthCell health_;
};

} // namespace

std::unique_ptr<Driver> detail::makeModbusClient(std::unique_ptr<ModbusTransport> transport) {
    return std::make_unique<ModbusClient>(std::move(transport));
}

} // namespace takt::io
