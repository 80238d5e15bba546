#include "gpio.h"

#include <fmt/format.h>

#include "registry.h"

namespace takt::io::detail {

GpioDriver::GpioDriver(GpioChipOpener opener, bool ownThread) : opener_(std::move(opener)), ownThread_(ownThread) {}

GpioDriver::~GpioDriver() {
    stop();
}

namespace {

// Reads the `line` and `address` shared by inputs and outputs; checks duplicates.
bool readLine(ParamReader& r, bool byteAddressing, Area area, ImageAddress& address, unsigned& line) {
    const auto text = r.string("address", true);
    // truST also names the line `pin`.
    if (r.has("line") && r.has("pin")) {
        r.fail("pin", "truST's name for line: give one of them");
    }
    const std::string_view lineKey = r.has("pin") ? "pin" : "line";
    const auto l = r.integer(lineKey, 0, 65535);
    if (r.ok() && !l) {
        r.fail("line", "missing (required)");
    }
    if (!r.ok()) {
        return false;
    }
    std::string why;
    if (!parseImageAddress(*text, byteAddressing, address, why)) {
        return r.fail("address", why);
    }
    if (!address.isBit() || address.area != area) {
        return r.fail("address", fmt::format("expected a {}X bit address, got '{}'", areaName(area), *text));
    }
    line = static_cast<unsigned>(*l);
    return true;
}

} // namespace

bool GpioDriver::init(const DriverSpec& spec, std::string& error) {
    ParamReader p(spec.params, spec.source.keyPrefix, error);
    static constexpr std::string_view kKnown[] = {"chip", "poll_ms", "on_error", "inputs", "outputs"};
    if (!p.onlyKeys(kKnown, "the gpio driver")) {
        return false;
    }
    chipName_ = p.string("chip").value_or("gpiochip0");
    pollNs_ = p.integer("poll_ms", 1, 1000).value_or(1) * 1'000'000;
    if (!parseOnError(p, onError_)) {
        return false;
    }
    std::vector<unsigned> lines;
    std::vector<BitExtent> bits;
    const auto claim = [&](ParamReader& r, unsigned line, const ImageAddress& a) {
        for (unsigned l : lines) {
            if (l == line) {
                return r.fail("line", fmt::format("line {} is used twice", line));
            }
        }
        const BitExtent e{a.area, a.bitPosition(), a.bitPosition() + 1};
        if (findOverlap(bits, e) >= 0) {
            return r.fail("address", "address is used twice");
        }
        lines.push_back(line);
        bits.push_back(e);
        return true;
    };
    if (const toml::array* list = p.tableArray("inputs"); list != nullptr) {
        for (std::size_t i = 0; i < list->size(); ++i) {
            std::string sub;
            ParamReader r(*(*list)[i].as_table(), elementPrefix(p, "inputs", i), sub);
            static constexpr std::string_view kIn[] = {"address", "line", "pin", "invert", "debounce_ms"};
            Input in;
            if (r.onlyKeys(kIn, "a gpio input") && readLine(r, spec.byteAddressing, Area::Input, in.address, in.line) &&
                claim(r, in.line, in.address)) {
                in.invert = r.boolean("invert").value_or(false);
                in.debounceNs = r.integer("debounce_ms", 0, 60000).value_or(0) * 1'000'000;
            }
            if (!r.ok()) {
                return p.adopt(sub);
            }
            inputs_.push_back(in);
        }
    }
    if (const toml::array* list = p.tableArray("outputs"); list != nullptr) {
        for (std::size_t i = 0; i < list->size(); ++i) {
            std::string sub;
            ParamReader r(*(*list)[i].as_table(), elementPrefix(p, "outputs", i), sub);
            static constexpr std::string_view kOut[] = {"address", "line", "pin", "invert", "initial"};
            Output out;
            if (r.onlyKeys(kOut, "a gpio output") &&
                readLine(r, spec.byteAddressing, Area::Output, out.address, out.line) &&
                claim(r, out.line, out.address)) {
                out.invert = r.boolean("invert").value_or(false);
                out.initial = r.boolean("initial").value_or(false);
            }
            if (!r.ok()) {
                return p.adopt(sub);
            }
            outputs_.push_back(out);
        }
    }
    if (!p.ok()) {
        return false;
    }
    in_.resize(inputs_.size());
    out_.resize(outputs_.size(), outputs_.size()); // the safe level of each output line

    return true;
}

std::vector<ByteRange> GpioDriver::ownedRanges() const {
    // Input lines write the image; output lines only read it.
    std::vector<BitExtent> in;
    for (const Input& i : inputs_) {
        in.push_back({i.address.area, i.address.bitPosition(), i.address.bitPosition() + 1});
    }
    std::vector<BitExtent> out;
    for (const Output& o : outputs_) {
        out.push_back({o.address.area, o.address.bitPosition(), o.address.bitPosition() + 1});
    }
    std::vector<ByteRange> r = byteRanges(in, Access::Write);
    const std::vector<ByteRange> read = byteRanges(out, Access::Read);
    r.insert(r.end(), read.begin(), read.end());
    return r;
}

bool GpioDriver::start(std::string& error) {
    std::string why;
    chip_ = opener_(chipName_, why);
    if (chip_ == nullptr) {
        error = fmt::format("gpio: {}", why);
        return false;
    }
    for (const Input& in : inputs_) {
        if (!chip_->requestInput(in.line, why)) {
            error = fmt::format("gpio {}: {}", chipName_, why);
            chip_.reset();
            return false;
        }
    }
    for (Output& out : outputs_) {
        if (!chip_->requestOutput(out.line, out.initial != out.invert, why)) {
            error = fmt::format("gpio {}: {}", chipName_, why);
            chip_.reset();
            return false;
        }
        out.driven = out.initial;
    }
    poll(monotonicNs()); // inputs are valid before the first cycle
    if (ownThread_) {
        stopping_ = false;
        thread_ = std::thread([this] {
            while (!stopping_.load(std::memory_order_acquire)) {
                const std::uint32_t seen = wake_.epoch();
                poll(monotonicNs());
                if (!stopping_.load(std::memory_order_acquire)) {
                    wake_.waitFor(seen, std::chrono::nanoseconds(pollNs_));
                }
            }
        });
    }
    return true;
}

void GpioDriver::poll(std::int64_t nowNs) {
    std::string why;
    bool failed = false;
    for (Input& in : inputs_) {
        bool level = false;
        if (!chip_->get(in.line, level, why)) {
            failed = true;
            continue;
        }
        const bool logical = level != in.invert;
        if (!in.sampled) {
            in.sampled = true;
            in.stable = in.candidate = logical;
            in.since = nowNs;
        } else if (logical != in.candidate) {
            in.candidate = logical;
            in.since = nowNs;
        }
        if (in.candidate != in.stable && nowNs - in.since >= in.debounceNs) {
            in.stable = in.candidate;
        }
    }
    std::uint8_t* sampled = in_.back();
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        sampled[i] = inputs_[i].stable ? 1 : 0;
    }
    in_.publish();
    // Until the first cycle's outputs the lines keep their initial levels.
    const OutputExchange::Source source = out_.take();
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        Output& out = outputs_[i];
        bool want = out.initial;
        if (source == OutputExchange::Source::Program) {
            want = out_.program()[i] != 0;
        } else if (source == OutputExchange::Source::Safe) {
            want = out_.safeImage()[i] != 0;
        }
        if (want != out.driven) {
            if (chip_->set(out.line, want != out.invert, why)) {
                out.driven = want;
            } else {
                failed = true;
            }
        }
    }
    if (failed) {
        fail(why);
    } else {
        health_.set(Health::Ok, {});
    }
}

void GpioDriver::fail(const std::string& why) {
    if (onError_ == OnError::Fault) {
        health_.set(Health::Faulted, why, IoError::DeviceError);
    } else if (onError_ == OnError::Warn) {
        health_.set(Health::Degraded, why, IoError::DeviceError);
    }
}

void GpioDriver::readInputs(ImageView image) noexcept {
    in_.refresh();
    const std::uint8_t* sampled = in_.front();
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        setBit(areaSpan(image, inputs_[i].address.area), inputs_[i].address.bitPosition(), sampled[i] != 0);
    }
}

void GpioDriver::writeOutputs(ImageView image) noexcept {
    if (!out_.accepting()) {
        return;
    }
    std::uint8_t* want = out_.back();
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        want[i] = getBit(areaSpan(image, outputs_[i].address.area), outputs_[i].address.bitPosition()) ? 1 : 0;
    }
    out_.publish();
}

// Each output line's safe level, in the layout writeOutputs() uses: one byte per line.
void GpioDriver::setSafeImage(std::span<const std::uint8_t> safeOutputs) {
    std::vector<std::uint8_t> levels(outputs_.size(), 0);
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        levels[i] = getBit(safeOutputs, outputs_[i].address.bitPosition()) ? 1 : 0;
    }
    out_.setSafe(levels);
}

void GpioDriver::applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept {
    out_.latchSafe();
    wake_.notify(); // the driver thread drives the lines now, even if the scan is stuck
}

void GpioDriver::releaseSafeState() noexcept {
    out_.release();
}

void GpioDriver::stop() noexcept {
    stopping_ = true;
    wake_.notify();
    if (thread_.joinable()) {
        thread_.join();
    }
    // The runtime latches the safe state right before it stops the drivers (SIGTERM, --for, a
    // halt): the stop can win the race against the poll that was woken to drive it, and a
    // released line keeps its level, so drive the safe levels here before letting go.
    if (chip_ != nullptr && out_.latched()) {
        poll(monotonicNs());
    }
    chip_.reset();
}

std::unique_ptr<Driver> makeGpio() {
    return std::make_unique<GpioDriver>();
}

} // namespace takt::io::detail
