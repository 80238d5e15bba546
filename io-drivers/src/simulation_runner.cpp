#include "simulation_runner.h"

#include <algorithm>

#include <fmt/format.h>

namespace takt::io::detail {

namespace {

// The address's value in `area` as an unsigned number (little-endian); 0 past the area's end.
std::uint64_t readValue(std::span<const std::uint8_t> area, const ScriptAddress& a) noexcept {
    if (a.isBit) {
        return a.byte < area.size() && ((area[a.byte] >> a.bit) & 1U) != 0 ? 1 : 0;
    }
    std::uint64_t v = 0;
    for (std::uint32_t k = 0; k < a.bytes && std::size_t{a.byte} + k < area.size(); ++k) {
        v |= std::uint64_t{area[a.byte + k]} << (8U * k);
    }
    return v;
}

std::uint64_t widthMask(const ScriptAddress& a) noexcept {
    return a.isBit ? 1 : a.bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8U * a.bytes)) - 1;
}

} // namespace

void ScriptRunner::configure(const SimulationScript& script) {
    script_ = script;
    std::size_t inputEnd = 0;
    const auto own = [&](const ScriptAddress& a) {
        inputEnd = std::max<std::size_t>(inputEnd, std::size_t{a.byte} + a.bytes);
        for (std::uint32_t k = 0; k < a.bytes; ++k) {
            if (std::find(owned_.begin(), owned_.end(), a.byte + k) == owned_.end()) {
                owned_.push_back(a.byte + k);
            }
        }
    };
    for (const Coupling& c : script_.couplings) {
        own(c.target);
        outputBytes_ = std::max<std::size_t>(outputBytes_, std::size_t{c.source.byte} + c.source.bytes);
    }
    for (const Disturbance& d : script_.disturbances) {
        if (!d.fault) {
            own(d.target);
        }
    }
    std::sort(owned_.begin(), owned_.end());
    held_.assign(inputEnd, 0);
    lanes_.assign(script_.couplings.size(), Lane{});
    ring_.assign(script_.couplings.size() * kMaxInFlight, InFlight{});
}

std::vector<ByteRange> ScriptRunner::ranges() const {
    std::vector<ByteRange> out;
    for (std::size_t i = 0; i < owned_.size();) {
        std::size_t j = i + 1;
        while (j < owned_.size() && owned_[j] == owned_[j - 1] + 1) {
            ++j;
        }
        out.push_back({Area::Input, owned_[i], static_cast<std::uint32_t>(j - i), Access::Write});
        i = j;
    }
    for (const Coupling& c : script_.couplings) {
        out.push_back({Area::Output, c.source.byte, c.source.bytes, Access::Read});
    }
    return out;
}

void ScriptRunner::write(const ScriptAddress& a, std::uint64_t value) noexcept {
    if (a.isBit) {
        const auto mask = static_cast<std::uint8_t>(1U << a.bit);
        held_[a.byte] = static_cast<std::uint8_t>(value != 0 ? (held_[a.byte] | mask) : (held_[a.byte] & ~mask));
        return;
    }
    for (std::uint32_t k = 0; k < a.bytes; ++k) {
        held_[a.byte + k] = static_cast<std::uint8_t>(value >> (8U * k));
    }
}

void ScriptRunner::pop(std::size_t lane) noexcept {
    Lane& l = lanes_[lane];
    write(script_.couplings[lane].target, ring_[lane * kMaxInFlight + l.head].value);
    l.head = (l.head + 1) % kMaxInFlight;
    --l.count;
}

void ScriptRunner::beforeCycle(std::int64_t nowNs, std::span<std::uint8_t> inputs) noexcept {
    if (!started_) {
        originNs_ = nowNs;
        started_ = true;
    }
    const std::int64_t now = nowNs - originNs_;
    for (; nextDisturbance_ < script_.disturbances.size(); ++nextDisturbance_) {
        const Disturbance& d = script_.disturbances[nextDisturbance_];
        if (d.atNs > now) {
            break;
        }
        if (d.fault) {
            fault_.store(static_cast<int>(nextDisturbance_), std::memory_order_release);
        } else {
            write(d.target, d.value);
        }
    }
    // Due values of all couplings in the order they were scheduled (due time, then sequence), so
    // two couplings on one input end with the later one as truST's single queue does.
    for (;;) {
        std::size_t best = lanes_.size();
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
            if (lanes_[i].count == 0) {
                continue;
            }
            const InFlight& f = ring_[i * kMaxInFlight + lanes_[i].head];
            if (f.dueNs > now) {
                continue;
            }
            const InFlight* b = best < lanes_.size() ? &ring_[best * kMaxInFlight + lanes_[best].head] : nullptr;
            if (b == nullptr || f.dueNs < b->dueNs || (f.dueNs == b->dueNs && f.sequence < b->sequence)) {
                best = i;
            }
        }
        if (best == lanes_.size()) {
            break;
        }
        pop(best);
    }
    for (const std::uint32_t b : owned_) {
        if (b < inputs.size()) {
            inputs[b] = held_[b];
        }
    }
}

void ScriptRunner::afterCycle(std::int64_t nowNs, std::span<const std::uint8_t> outputs) noexcept {
    const std::int64_t now = started_ ? nowNs - originNs_ : 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        const Coupling& c = script_.couplings[i];
        const std::uint64_t raw = readValue(outputs, c.source);
        std::uint64_t value = 0;
        if (c.threshold) {
            // truST compares the output as the unsigned number of its width.
            value = static_cast<double>(raw) >= *c.threshold ? c.onTrue : c.onFalse;
        } else {
            value = c.target.isBit ? (raw != 0 ? 1 : 0) : raw & widthMask(c.target);
        }
        Lane& l = lanes_[i];
        if (l.hasLast && l.last == value) {
            continue;
        }
        l.last = value;
        l.hasLast = true;
        if (l.count == kMaxInFlight) {
            pop(i);
        }
        ring_[i * kMaxInFlight + (l.head + l.count) % kMaxInFlight] = InFlight{now + c.delayNs, sequence_++, value};
        ++l.count;
    }
}

HealthStatus ScriptRunner::health() const {
    const int i = fault_.load(std::memory_order_acquire);
    if (i < 0) {
        return {};
    }
    const Disturbance& d = script_.disturbances[static_cast<std::size_t>(i)];
    return {Health::Faulted,
            fmt::format("{} at {} ms: {}", script_.file.filename().string(), d.atNs / 1'000'000, d.message)};
}

} // namespace takt::io::detail
