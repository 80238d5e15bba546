// The modbus-server driver (CONFIG.md "io.toml"): a Modbus TCP server (libmodbus) that exposes
// image areas to SCADA/HMI masters.
//
// Params: listen = "host:port" ("127.0.0.1:5020"), unit_id (1; requests for unit 0 and 255 are
// answered too, as TCP masters commonly use them), max_connections (8), and
// `map = [{table, start, count, address}]`. The default map is the one OpenPLC users know:
//   coils 0..8191             <-> %QX0.0..%QX1023.7
//   discrete inputs 0..8191   <-  %IX0.0..%IX1023.7
//   input registers 0..1023   <-  %IW0..%IW1023
//   holding registers 0..1023 <-> %QW0..%QW1023, 1024..2047 <-> %MW0..%MW1023
// A table named in `map` replaces that table's default entries; the other tables keep theirs.
// Map entries past the program's image read as 0 and ignore writes. Byte order: modbus_map.h.
//
// Threads: the server runs a poll() loop on its own thread and serves up to max_connections
// masters concurrently (one request at a time each; a further connection is closed at once).
// At the end of each cycle writeOutputs() snapshots the mapped image bytes; requests are
// answered from the newest snapshot. A master's write is recorded as pending (and visible to
// reads at once) and is applied to the image at the next cycle boundary (readInputs()). Both
// travel through triple buffers (scan_exchange.h): the scan thread never waits for the server. Coils and
// holding registers are the writable tables: their image bytes are what this driver owns.
// While the runtime latches the safe state, every entry mapped to %Q is answered with the safe
// image ([[io.safe_state]]) and masters' writes to those entries are dropped: the masters are this
// driver's field, so they see what a wired output would show.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <modbus.h>

#include "driver_support.h"
#include "modbus_map.h"
#include "registry.h"
#include "scan_exchange.h"

namespace takt::io {
namespace {

using namespace detail;

constexpr ModbusTable kAllTables[] = {ModbusTable::Coils, ModbusTable::DiscreteInputs, ModbusTable::InputRegisters,
                                      ModbusTable::HoldingRegisters};
constexpr Area kAllAreas[] = {Area::Input, Area::Output, Area::Memory};
constexpr int kPollMs = 50; // how soon stop() is noticed

// One table as libmodbus lays it out: [first, first + size) with one byte per bit or one
// uint16 per register. Sized once in init().
template <typename T> struct Table {
    std::uint32_t first = 0;
    std::uint32_t size = 0;
    std::size_t snapshot = 0; // byte offset of its values in a snapshot slot
    std::size_t pending = 0;  // writable tables: byte offset of [gen u64 x size][T x size] in a pending slot
    std::vector<T> values;    // the scan thread's snapshot of it
    // Writable tables, server thread: per entry the write (pendingSeq_) that last changed it and
    // is not known to be applied (0: none), and its value; 1 where an entry is mapped to %Q.
    std::vector<std::uint64_t> gen;
    std::vector<T> written;
    std::vector<std::uint8_t> output;
};

template <typename T> T loadAt(const std::uint8_t* p) noexcept {
    T v{};
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename T> void copyIn(std::uint8_t* to, const std::vector<T>& from) noexcept {
    copyBytes(to, from.data(), from.size() * sizeof(T));
}

ImageAddress addr(Area a, char letter, std::uint32_t byteOffset) {
    ImageAddress x;
    x.area = a;
    x.sizeLetter = letter;
    x.byteOffset = byteOffset;
    x.size = letter == 'X' ? 0 : 2;
    return x;
}

class ModbusServer final : public Driver {
public:
    ~ModbusServer() override { stop(); }

    std::string_view name() const noexcept override { return "modbus-server"; }

    bool init(const DriverSpec& spec, std::string& error) override {
        ParamReader p(spec.params, spec.source.keyPrefix, error);
        static constexpr std::string_view kKnown[] = {"listen", "unit_id", "max_connections", "map"};
        if (!p.onlyKeys(kKnown, "the modbus-server driver")) {
            return false;
        }
        const std::string listen = p.string("listen").value_or("127.0.0.1:5020");
        if (std::string why; p.ok() && !parseHostPort(listen, std::nullopt, listen_, why)) {
            p.fail("listen", why);
        }
        unitId_ = static_cast<int>(p.integer("unit_id", 0, 255).value_or(1));
        maxConnections_ = static_cast<int>(p.integer("max_connections", 1, 1024).value_or(8));
        std::vector<ModbusMap> overrides;
        if (!p.ok() || !readModbusMaps(p, "map", "table", kAllTables, kAllAreas, spec.byteAddressing, overrides)) {
            return false;
        }
        const ModbusMap defaults[] = {
            {ModbusTable::Coils, 0, 8192, addr(Area::Output, 'X', 0)},
            {ModbusTable::DiscreteInputs, 0, 8192, addr(Area::Input, 'X', 0)},
            {ModbusTable::InputRegisters, 0, 1024, addr(Area::Input, 'W', 0)},
            {ModbusTable::HoldingRegisters, 0, 1024, addr(Area::Output, 'W', 0)},
            {ModbusTable::HoldingRegisters, 1024, 1024, addr(Area::Memory, 'W', 0)},
        };
        for (const ModbusMap& d : defaults) {
            const bool replaced =
                std::any_of(overrides.begin(), overrides.end(), [&](const ModbusMap& o) { return o.table == d.table; });
            if (!replaced) {
                maps_.push_back(d);
            }
        }
        maps_.insert(maps_.end(), overrides.begin(), overrides.end());
        // Within one table two entries may not claim the same Modbus address.
        for (std::size_t i = 0; i < maps_.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                const ModbusMap& a = maps_[i];
                const ModbusMap& b = maps_[j];
                if (a.table == b.table && a.start < b.start + b.count && b.start < a.start + a.count) {
                    return p.fail("map", fmt::format("two entries both map {} {}..{}", tableName(a.table),
                                                     std::max(a.start, b.start),
                                                     std::min(a.start + a.count, b.start + b.count) - 1));
                }
            }
        }
        std::size_t snapshot = kSeqBytes;
        std::size_t pending = kSeqBytes;
        size(coils_, ModbusTable::Coils, true, snapshot, pending);
        size(discrete_, ModbusTable::DiscreteInputs, false, snapshot, pending);
        size(holding_, ModbusTable::HoldingRegisters, true, snapshot, pending);
        size(inputRegs_, ModbusTable::InputRegisters, false, snapshot, pending);
        pending_.resize(pending);
        std::uint64_t safeBits = 0; // the %Q bits the map reaches: what the safe image needs
        for (const ModbusMap& m : maps_) {
            if (m.address.area == Area::Output) {
                safeBits = std::max(safeBits, m.extent().last);
            }
        }
        snapshot_.resize(snapshot, static_cast<std::size_t>((safeBits + 7) / 8));
        coilsBefore_.assign(coils_.size, 0);
        holdingBefore_.assign(holding_.size, 0);
        return true;
    }

    std::vector<ByteRange> ownedRanges() const override {
        std::vector<ByteRange> r;
        for (const ModbusMap& m : maps_) {
            if (m.table == ModbusTable::Coils || m.table == ModbusTable::HoldingRegisters) {
                const auto one = byteRanges({m.extent()});
                r.insert(r.end(), one.begin(), one.end());
            }
        }
        return mergeRanges(r);
    }

    bool start(std::string& error) override {
        ctx_ = modbus_new_tcp_pi(listen_.host.c_str(), std::to_string(listen_.port).c_str());
        if (ctx_ == nullptr) {
            error = fmt::format("modbus-server: cannot create a context: {}", modbus_strerror(errno));
            return false;
        }
        modbus_set_byte_timeout(ctx_, 0, 200'000); // a stalled half request frees the thread soon
        mapping_ = modbus_mapping_new_start_address(coils_.first, static_cast<unsigned>(coils_.values.size()),
                                                    discrete_.first, static_cast<unsigned>(discrete_.values.size()),
                                                    holding_.first, static_cast<unsigned>(holding_.values.size()),
                                                    inputRegs_.first, static_cast<unsigned>(inputRegs_.values.size()));
        listenFd_ = mapping_ == nullptr ? -1 : modbus_tcp_pi_listen(ctx_, maxConnections_);
        if (listenFd_ < 0) {
            error = fmt::format("modbus-server: cannot listen on {}:{}: {}", listen_.host, listen_.port,
                                modbus_strerror(errno));
            stop();
            return false;
        }
        stopping_ = false;
        thread_ = std::thread([this] { run(); });
        return true;
    }

    // The masters' writes not applied yet, each once: those of a newer write than applied_.
    void readInputs(ImageView image) noexcept override {
        if (pending_.size() == 0) {
            return; // not initialised
        }
        pending_.refresh();
        const std::uint8_t* slot = pending_.front();
        const auto seq = loadAt<std::uint64_t>(slot);
        if (seq == applied_) {
            return;
        }
        const bool latched = snapshot_.latched(); // writes to %Q entries wait for no one: dropped
        for (const ModbusMap& m : maps_) {
            if (latched && m.address.area == Area::Output) {
                continue;
            }
            const std::span<std::uint8_t> area = areaSpan(image, m.address.area);
            if (m.table == ModbusTable::Coils) {
                applyPending(coils_, m, slot, [&](std::uint32_t k, std::uint8_t v) {
                    setBit(area, m.address.bitPosition() + k, v != 0);
                });
            } else if (m.table == ModbusTable::HoldingRegisters) {
                applyPending(holding_, m, slot, [&](std::uint32_t k, std::uint16_t v) {
                    const std::size_t at = m.address.byteOffset + 2 * std::size_t{k};
                    if (at + 2 <= area.size()) {
                        std::memcpy(area.data() + at, &v, 2);
                    }
                });
            }
        }
        applied_ = seq;
    }

    // The snapshot masters read, stamped with the writes it already holds. Entries mapped to %Q
    // are served from the safe image while it is latched (the server thread overlays them).
    void writeOutputs(ImageView image) noexcept override {
        if (snapshot_.bytes() == 0) {
            return; // not initialised
        }
        for (const ModbusMap& m : maps_) {
            const std::span<std::uint8_t> area = areaSpan(image, m.address.area);
            switch (m.table) {
            case ModbusTable::Coils: imageToBits(m, area, slice(coils_, m)); break;
            case ModbusTable::DiscreteInputs: imageToBits(m, area, slice(discrete_, m)); break;
            case ModbusTable::InputRegisters: imageToRegs(m, area, slice(inputRegs_, m)); break;
            case ModbusTable::HoldingRegisters: imageToRegs(m, area, slice(holding_, m)); break;
            }
        }
        std::uint8_t* slot = snapshot_.back();
        std::memcpy(slot, &applied_, sizeof(applied_));
        copyIn(slot + coils_.snapshot, coils_.values);
        copyIn(slot + discrete_.snapshot, discrete_.values);
        copyIn(slot + holding_.snapshot, holding_.values);
        copyIn(slot + inputRegs_.snapshot, inputRegs_.values);
        snapshot_.publish();
    }

    // The masters are this driver's field: every entry mapped to %Q serves the safe image from
    // now on, and a master's write to one is dropped, until releaseSafeState().
    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override { snapshot_.setSafe(safeOutputs); }

    void applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept override { snapshot_.latchSafe(); }

    void releaseSafeState() noexcept override { snapshot_.release(); }

    HealthStatus health() const override { return health_.get(); }

    void stop() noexcept override {
        stopping_ = true;
        if (thread_.joinable()) {
            thread_.join();
        }
        for (const int fd : clients_) {
            ::close(fd);
        }
        clients_.clear();
        if (listenFd_ >= 0) {
            ::close(listenFd_);
            listenFd_ = -1;
        }
        if (mapping_ != nullptr) {
            modbus_mapping_free(mapping_);
            mapping_ = nullptr;
        }
        if (ctx_ != nullptr) {
            modbus_set_socket(ctx_, -1);
            modbus_free(ctx_);
            ctx_ = nullptr;
        }
    }

private:
    template <typename T>
    void size(Table<T>& t, ModbusTable which, bool writable, std::size_t& snapshot, std::size_t& pending) {
        std::uint32_t lo = 0xFFFFFFFFU;
        std::uint32_t hi = 0;
        for (const ModbusMap& m : maps_) {
            if (m.table == which) {
                lo = std::min(lo, m.start);
                hi = std::max(hi, m.start + m.count);
            }
        }
        t.first = hi == 0 ? 0 : lo;
        t.size = hi == 0 ? 0 : hi - lo;
        t.values.assign(t.size, 0);
        t.snapshot = snapshot;
        snapshot += t.size * sizeof(T);
        if (writable) {
            t.gen.assign(t.size, 0);
            t.written.assign(t.size, 0);
            t.output.assign(t.size, 0);
            for (const ModbusMap& m : maps_) {
                if (m.table == which && m.address.area == Area::Output) {
                    std::fill_n(t.output.begin() + (m.start - t.first), m.count, 1);
                }
            }
            t.pending = pending;
            pending += t.size * (sizeof(std::uint64_t) + sizeof(T));
        }
    }

    template <typename T> static std::span<T> slice(Table<T>& t, const ModbusMap& m) {
        return std::span(t.values).subspan(m.start - t.first, m.count);
    }

    // Scan thread: `put` for every entry of `m` that a write newer than applied_ changed.
    template <typename T, typename F>
    void applyPending(const Table<T>& t, const ModbusMap& m, const std::uint8_t* slot, F&& put) const {
        const std::uint8_t* gens = slot + t.pending;
        const std::uint8_t* values = gens + t.size * sizeof(std::uint64_t);
        for (std::uint32_t k = 0; k < m.count; ++k) {
            const std::size_t i = m.start - t.first + k;
            if (loadAt<std::uint64_t>(gens + i * sizeof(std::uint64_t)) > applied_) {
                put(k, loadAt<T>(values + i * sizeof(T)));
            }
        }
    }

    // Server thread: the writes newer than `applied` (those the snapshot does not hold yet)
    // over the table in the mapping, as masters read them.
    template <typename T> static void overlayPending(const Table<T>& t, std::uint64_t applied, T* tab) {
        for (std::size_t i = 0; i < t.size; ++i) {
            if (t.gen[i] > applied) {
                tab[i] = t.written[i];
            }
        }
    }

    // Server thread: the entries mapped to %Q take the safe image.
    void serveSafeValues() noexcept {
        const std::span<const std::uint8_t> safe = snapshot_.safeImage();
        const auto tab = [](auto& t, auto* base, const ModbusMap& m) {
            return std::span(base + (m.start - t.first), m.count);
        };
        for (const ModbusMap& m : maps_) {
            if (m.address.area != Area::Output) {
                continue;
            }
            switch (m.table) {
            case ModbusTable::Coils: imageToBits(m, safe, tab(coils_, mapping_->tab_bits, m)); break;
            case ModbusTable::DiscreteInputs: imageToBits(m, safe, tab(discrete_, mapping_->tab_input_bits, m)); break;
            case ModbusTable::InputRegisters:
                imageToRegs(m, safe, tab(inputRegs_, mapping_->tab_input_registers, m));
                break;
            case ModbusTable::HoldingRegisters: imageToRegs(m, safe, tab(holding_, mapping_->tab_registers, m)); break;
            }
        }
    }

    static std::vector<ByteRange> mergeRanges(std::vector<ByteRange> r) {
        std::sort(r.begin(), r.end(), [](const ByteRange& a, const ByteRange& b) {
            return a.area != b.area ? a.area < b.area : a.first < b.first;
        });
        std::vector<ByteRange> out;
        for (const ByteRange& x : r) {
            if (!out.empty() && out.back().area == x.area && x.first <= out.back().first + out.back().count) {
                out.back().count = std::max(out.back().count, x.first + x.count - out.back().first);
            } else {
                out.push_back(x);
            }
        }
        return out;
    }

    // Server thread -------------------------------------------------------------------------
    void run() {
        std::vector<pollfd> fds;
        std::vector<std::uint8_t> query(MODBUS_TCP_MAX_ADU_LENGTH);
        while (!stopping_) {
            fds.clear();
            fds.push_back({listenFd_, POLLIN, 0});
            for (const int fd : clients_) {
                fds.push_back({fd, POLLIN, 0});
            }
            const int n = ::poll(fds.data(), fds.size(), kPollMs);
            if (n < 0) {
                if (errno != EINTR) {
                    health_.set(Health::Faulted, fmt::format("poll failed: {}", std::strerror(errno)));
                    return;
                }
                continue;
            }
            if (n == 0) {
                continue;
            }
            for (std::size_t i = 1; i < fds.size(); ++i) {
                if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !serve(fds[i].fd, query)) {
                    ::close(fds[i].fd);
                    clients_.erase(std::find(clients_.begin(), clients_.end(), fds[i].fd));
                }
            }
            if ((fds[0].revents & POLLIN) != 0) {
                const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0 && static_cast<int>(clients_.size()) >= maxConnections_) {
                    ::close(fd); // over the limit: refuse rather than queue
                } else if (fd >= 0) {
                    clients_.push_back(fd);
                }
            }
            health_.set(Health::Ok, {});
        }
    }

    // Answers one request on `fd`; false when the connection is to be closed.
    bool serve(int fd, std::vector<std::uint8_t>& query) {
        modbus_set_socket(ctx_, fd);
        const int len = modbus_receive(ctx_, query.data());
        if (len <= 0) {
            return len == 0; // 0: a request libmodbus ignores; -1: closed, or not Modbus
        }
        const int header = modbus_get_header_length(ctx_);
        const int unit = query[static_cast<std::size_t>(header) - 1];
        if (unit != unitId_ && unit != 0 && unit != 0xFF) {
            return modbus_reply_exception(ctx_, query.data(), MODBUS_EXCEPTION_GATEWAY_TARGET) >= 0;
        }
        // The newest snapshot, the writes it does not hold yet, the safe image while latched.
        const OutputExchange::Source source = snapshot_.take();
        const std::uint8_t* slot = snapshot_.program();
        const auto held = loadAt<std::uint64_t>(slot); // the newest write the snapshot holds
        copyOut(slot + coils_.snapshot, coils_.size, mapping_->tab_bits);
        copyOut(slot + discrete_.snapshot, discrete_.size, mapping_->tab_input_bits);
        copyOut(slot + holding_.snapshot, holding_.size, mapping_->tab_registers);
        copyOut(slot + inputRegs_.snapshot, inputRegs_.size, mapping_->tab_input_registers);
        overlayPending(coils_, held, mapping_->tab_bits);
        overlayPending(holding_, held, mapping_->tab_registers);
        if (source == OutputExchange::Source::Safe) {
            serveSafeValues(); // a latched safe state is not the master's to change
        }
        copyTo(mapping_->tab_bits, coilsBefore_);
        copyTo(mapping_->tab_registers, holdingBefore_);
        const std::uint8_t function = query[static_cast<std::size_t>(header)];
        const bool writes = function == 0x05 || function == 0x06 || function == 0x0F || function == 0x10 ||
                            function == 0x16 || function == 0x17;
        if (modbus_reply(ctx_, query.data(), len, mapping_) < 0) {
            return false;
        }
        if (writes) {
            // Writes to entries mapped to %Q are dropped while the safe state is latched.
            const bool latched = snapshot_.latched();
            ++pendingSeq_;
            const bool coils = record(coils_, mapping_->tab_bits, coilsBefore_, latched);
            const bool any = record(holding_, mapping_->tab_registers, holdingBefore_, latched) || coils;
            if (any) {
                publishPending();
            } else {
                --pendingSeq_;
            }
        }
        return true;
    }

    template <typename T> static void copyOut(const std::uint8_t* from, std::uint32_t n, T* to) {
        copyBytes(to, from, n * sizeof(T));
    }

    template <typename T> static void copyTo(const T* from, std::vector<T>& to) {
        std::copy_n(from, to.size(), to.begin()); // sized in start(): no allocation
    }

    // What a write changed relative to what the request was served from becomes pending, under
    // the write's number. True when anything did.
    template <typename T> bool record(Table<T>& t, const T* after, const std::vector<T>& before, bool latched) {
        bool any = false;
        for (std::size_t i = 0; i < t.size; ++i) {
            if (after[i] != before[i] && !(latched && t.output[i] != 0)) {
                t.written[i] = after[i];
                t.gen[i] = pendingSeq_;
                any = true;
            }
        }
        return any;
    }

    // Server thread: every pending write to the scan thread, in one slot.
    void publishPending() noexcept {
        std::uint8_t* slot = pending_.back();
        std::memcpy(slot, &pendingSeq_, sizeof(pendingSeq_));
        copyIn(slot + coils_.pending, coils_.gen);
        copyIn(slot + coils_.pending + coils_.size * sizeof(std::uint64_t), coils_.written);
        copyIn(slot + holding_.pending, holding_.gen);
        copyIn(slot + holding_.pending + holding_.size * sizeof(std::uint64_t), holding_.written);
        pending_.publish();
    }

    // Config
    HostPort listen_;
    int unitId_ = 1;
    int maxConnections_ = 8;
    std::vector<ModbusMap> maps_;

    // Shared with the scan thread (and the watchdog) without a lock (scan_exchange.h):
    //   snapshot_ (scan -> server): [applied u64] coils | discrete | holding | input regs
    //   pending_ (server -> scan):  [seq u64] coils' gen u64 and value | holding's
    static constexpr std::size_t kSeqBytes = 8;
    OutputExchange snapshot_;
    TripleBuffer pending_;
    Table<std::uint8_t> coils_, discrete_;
    Table<std::uint16_t> inputRegs_, holding_;
    std::uint64_t applied_ = 0;    // scan thread: the newest write applied to the image
    std::uint64_t pendingSeq_ = 0; // server thread: the writes recorded so far

    // Server thread only (after start()).
    modbus_t* ctx_ = nullptr;
    modbus_mapping_t* mapping_ = nullptr;
    int listenFd_ = -1;
    std::vector<int> clients_;
    std::vector<std::uint8_t> coilsBefore_;
    std::vector<std::uint16_t> holdingBefore_;
    std::atomic<bool> stopping_ = false;
    std::thread thread_;
    HealthCell health_;
};

} // namespace

std::unique_ptr<Driver> detail::makeModbusServer() {
    return std::make_unique<ModbusServer>();
}

} // namespace takt::io
