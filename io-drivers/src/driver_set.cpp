#include "takt/io/driver_set.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace takt::io {
namespace {

char areaLetter(Area a) {
    switch (a) {
    case Area::Input: return 'I';
    case Area::Output: return 'Q';
    case Area::Memory: return 'M';
    }
    return 'I';
}

// Bytes 0..3 of a status block (driver.h kStatusBlockBytes): flags, health, error code.
std::uint32_t packStatus(const HealthStatus& h) {
    const bool ok = h.health == Health::Ok;
    const std::uint32_t flags = (ok ? 1u : 0u) | (h.inputsBad ? 2u : 0u) | (h.health == Health::Faulted ? 4u : 0u);
    return flags | (static_cast<std::uint32_t>(h.health) << 8) | (static_cast<std::uint32_t>(h.code) << 16);
}

std::size_t areaIndex(Area a) {
    return static_cast<std::size_t>(a);
}

ImageView toDriverView(const engine::ProcessImageView& v) {
    return ImageView{v.inputs, v.outputs, v.memory, v.cycleStartNs, v.cycleIntervalNs};
}

// "io.toml:3:1: driver 'mqtt' (io.params)", at `where` (the driver entry unless given).
std::string driverLabel(const IoConfig& config, const DriverSpec& spec, std::size_t index,
                        std::optional<SourcePoint> where = std::nullopt) {
    const std::string prefix =
        spec.source.keyPrefix.empty() ? fmt::format("io.drivers[{}]", index) : spec.source.keyPrefix;
    const std::string file = spec.source.file.empty() ? config.file.string() : spec.source.file;
    const SourcePoint at = where.value_or(SourcePoint{spec.line, spec.column});
    if (at.line > 0) {
        return fmt::format("{}:{}:{}: driver '{}' ({})", file, at.line, at.column, spec.name, prefix);
    }
    return fmt::format("{}: driver '{}' ({})", file, spec.name, prefix);
}

} // namespace

std::string statusBlockLabel(const IoConfig& config, const DriverSpec& spec, std::size_t index) {
    const std::string file = spec.source.file.empty() ? config.file.string() : spec.source.file;
    std::string prefix =
        spec.source.keyPrefix.empty() ? fmt::format("io.drivers[{}].params", index) : spec.source.keyPrefix;
    prefix = prefix.substr(0, prefix.size() - std::string_view(".params").size()) + ".status";
    return fmt::format("{}:{}:{}: status block of driver '{}' ({})", file, spec.statusLine, spec.statusColumn,
                       spec.name, prefix);
}

std::string wholeImageOverlapWarning(const std::string& earlier, const std::string& later, const ByteRange& common) {
    return fmt::format(
        "{} and {} both write {} as truST whole-image inputs (mqtt topic_in, modbus-tcp or "
        "modbus-rtu input_start); accepted: the later driver in the list wins for the bytes it writes in a cycle "
        "(drivers are read in list order)",
        earlier, later, describeRange(common));
}

std::string describeRange(const ByteRange& r) {
    const char a = areaLetter(r.area);
    if (r.count <= 1) {
        return fmt::format("%{}B{}", a, r.first);
    }
    return fmt::format("%{}B{}..%{}B{}", a, r.first, a, r.first + r.count - 1);
}

DriverSet::~DriverSet() {
    stop();
}

bool DriverSet::configure(const IoConfig& config, std::size_t programOutputBytes, std::string& error) {
    std::vector<std::unique_ptr<Driver>> drivers;
    for (std::size_t i = 0; i < config.drivers.size(); ++i) {
        const DriverSpec& spec = config.drivers[i];
        std::unique_ptr<Driver> d = createDriver(spec.name);
        if (d == nullptr) {
            std::string known;
            for (const std::string_view n : driverNames()) {
                known += (known.empty() ? "" : ", ") + std::string(n);
            }
            error = fmt::format("{}: unknown driver (known: {})", driverLabel(config, spec, i), known);
            return false;
        }
        drivers.push_back(std::move(d));
    }
    return configure(std::move(drivers), config.drivers, config, programOutputBytes, error);
}

bool DriverSet::configure(std::vector<std::unique_ptr<Driver>> drivers, const std::vector<DriverSpec>& specs,
                          const IoConfig& config, std::size_t programOutputBytes, std::string& error) {
    stop();
    drivers_.clear();
    labels_.clear();
    warnings_.clear();
    std::fill(std::begin(bytes_), std::end(bytes_), 0);
    struct Owned {
        ByteRange range;
        std::size_t driver;
    };
    std::vector<Owned> owned;
    std::vector<std::string> labels;
    std::vector<std::string> warnings;
    // Owners past the drivers are their status blocks (owner n + i: driver i's), which clash with
    // any other writer of their bytes, the driver's own ranges included.
    const std::size_t n = drivers.size();
    std::vector<std::string> statusLabels(n);
    for (std::size_t i = 0; i < n; ++i) {
        labels.push_back(driverLabel(config, specs[i], i));
        std::string why;
        if (!drivers[i]->init(specs[i], why)) {
            // At the bad key's line and column, not those of the driver entry.
            const SourcePoint key = paramKeyLocation(specs[i], why.substr(0, why.find(": ")));
            error = fmt::format("{}: {}", driverLabel(config, specs[i], i, key), why);
            return false;
        }
        std::vector<std::pair<ByteRange, std::size_t>> ranges;
        for (const ByteRange& r : drivers[i]->ownedRanges()) {
            ranges.emplace_back(r, i);
        }
        if (specs[i].status.count != 0) {
            statusLabels[i] = statusBlockLabel(config, specs[i], i);
            ranges.emplace_back(specs[i].status, n + i);
        }
        for (const auto& [r, owner] : ranges) {
            if (r.count == 0) {
                continue;
            }
            const auto label = [&](std::size_t who) { return who < n ? labels[who] : statusLabels[who - n]; };
            for (const Owned& o : owned) {
                if (o.driver == owner) {
                    continue; // one driver may list adjacent or shared bytes (gpio lines of one byte)
                }
                if (const ByteRange common = writeClash(o.range, r); common.count != 0) {
                    if (sharedWholeImage(o.range, r)) {
                        warnings.push_back(wholeImageOverlapWarning(labels[o.driver], labels[i], common));
                        continue;
                    }
                    error = fmt::format("{} and {} both write {}: each byte of the process image has one writer "
                                        "(change the drivers' address ranges)",
                                        label(o.driver), label(owner), describeRange(common));
                    return false;
                }
            }
            owned.push_back({r, owner});
            const std::size_t a = areaIndex(r.area);
            bytes_[a] = std::max<std::size_t>(bytes_[a], static_cast<std::size_t>(r.first) + r.count);
        }
    }
    // The safe image covers every output the program or a driver knows, and every safe-state entry.
    std::size_t outBytes = std::max(bytes_[1], programOutputBytes);
    for (const SafeValue& v : config.safeState) {
        if (v.range.area == Area::Output) {
            outBytes = std::max<std::size_t>(outBytes, static_cast<std::size_t>(v.range.first) + v.range.count);
        }
    }
    bytes_[1] = outBytes;
    safe_ = safeOutputImage(config, outBytes);
    for (const auto& d : drivers) {
        d->setSafeImage(safe_); // before start: a comm loss applies io.toml's safe state, not zeros
    }
    status_.assign(n, StatusSlot{});
    statusWords_ = std::make_unique<std::atomic<std::uint32_t>[]>(n);
    for (std::size_t i = 0; i < n; ++i) {
        status_[i].range = specs[i].status;
    }
    drivers_ = std::move(drivers);
    labels_ = std::move(labels);
    warnings_ = std::move(warnings);
    started_.assign(drivers_.size(), false);
    return true;
}

bool DriverSet::start(std::string& error) {
    for (std::size_t i = 0; i < drivers_.size(); ++i) {
        std::string why;
        if (!drivers_[i]->start(why)) {
            error = fmt::format("{}: cannot start: {}", labels_[i], why);
            stop();
            return false;
        }
        started_[i] = true;
    }
    (void)refreshHealth();
    return true;
}

void DriverSet::stop() noexcept {
    // Reverse order: a driver started later may depend on an earlier one's resources.
    for (std::size_t i = drivers_.size(); i-- > 0;) {
        if (started_[i]) {
            drivers_[i]->stop();
            started_[i] = false;
        }
    }
}

std::vector<DriverHealthReport> DriverSet::refreshHealth() {
    std::vector<DriverHealthReport> out;
    std::uint8_t worst = 0;
    std::uint16_t degraded = 0;
    std::uint16_t faulted = 0;
    std::uint16_t failedClosed = 0;
    for (std::size_t i = 0; i < drivers_.size(); ++i) {
        const auto& d = drivers_[i];
        DriverHealthReport r{std::string(d->name()), d->health()};
        statusWords_[i].store(packStatus(r.status), std::memory_order_relaxed);
        const bool isFaulted = r.status.health == Health::Faulted;
        worst = std::max(worst, static_cast<std::uint8_t>(r.status.health));
        degraded = static_cast<std::uint16_t>(degraded + (r.status.health == Health::Degraded ? 1 : 0));
        faulted = static_cast<std::uint16_t>(faulted + (isFaulted ? 1 : 0));
        failedClosed = static_cast<std::uint16_t>(failedClosed + (isFaulted && d->failsClosed() ? 1 : 0));
        out.push_back(std::move(r));
    }
    worst_.store(worst, std::memory_order_relaxed);
    degraded_.store(degraded, std::memory_order_relaxed);
    faulted_.store(faulted, std::memory_order_relaxed);
    failedClosed_.store(failedClosed, std::memory_order_relaxed);
    return out;
}

std::string DriverSet::failedClosedReason() const {
    std::string out;
    for (const auto& d : drivers_) {
        if (!d->failsClosed()) {
            continue;
        }
        if (const HealthStatus h = d->health(); h.health == Health::Faulted) {
            out += fmt::format("{}{} (on_error = \"fault\"): {}", out.empty() ? "" : "; ", d->name(), h.reason);
        }
    }
    return out;
}

void DriverSet::readInputs(const engine::ProcessImageView& image) noexcept {
    const ImageView v = toDriverView(image);
    for (const auto& d : drivers_) {
        d->readInputs(v);
    }
    writeStatusBlocks(v);
}

// Scan thread, after the drivers' inputs: every status block from the packed health word and
// the cycles since the driver's last good exchange (or, for a driver that does not count them,
// since its health was last ok).
void DriverSet::writeStatusBlocks(const ImageView& image) noexcept {
    for (std::size_t i = 0; i < status_.size(); ++i) {
        StatusSlot& slot = status_[i];
        if (slot.range.count == 0) {
            continue;
        }
        std::uint32_t word = statusWords_[i].load(std::memory_order_relaxed);
        const Driver& d = *drivers_[i];
        if (const std::optional<bool> bad = d.inputsBadThisCycle()) {
            // The bad flag of this very cycle's inputs; bad inputs are never ok.
            word = *bad ? (word | 2u) & ~1u : word & ~2u;
        }
        bool fresh = (word & 1u) != 0; // ok
        if (d.countsExchanges()) {
            const std::uint64_t seen = d.goodExchanges();
            fresh = seen != slot.seenExchanges;
            slot.seenExchanges = seen;
        }
        slot.cycles = fresh ? 0 : (slot.cycles == UINT32_MAX ? slot.cycles : slot.cycles + 1);
        const std::span<std::uint8_t> area = slot.range.area == Area::Input ? image.inputs : image.memory;
        if (std::size_t{slot.range.first} + kStatusBlockBytes > area.size()) {
            continue; // the area is sized to hold it (configure); a smaller view gets nothing
        }
        std::uint8_t* out = area.data() + slot.range.first;
        for (std::uint32_t b = 0; b < 4; ++b) {
            out[b] = static_cast<std::uint8_t>(word >> (8 * b));
            out[4 + b] = static_cast<std::uint8_t>(slot.cycles >> (8 * b));
        }
    }
}

void DriverSet::writeOutputs(const engine::ProcessImageView& image) noexcept {
    const ImageView v = toDriverView(image);
    for (const auto& d : drivers_) {
        d->writeOutputs(v);
    }
}

void DriverSet::applySafeState() noexcept {
    for (const auto& d : drivers_) {
        d->applySafeState(safe_);
    }
}

void DriverSet::releaseSafeState() noexcept {
    for (const auto& d : drivers_) {
        d->releaseSafeState();
    }
}

engine::IoHealthSummary DriverSet::healthSummary() const noexcept {
    return engine::IoHealthSummary{worst_.load(std::memory_order_relaxed), degraded_.load(std::memory_order_relaxed),
                                   faulted_.load(std::memory_order_relaxed),
                                   failedClosed_.load(std::memory_order_relaxed)};
}

} // namespace takt::io
