#include "takt/engine/scan_command.h"

#include <cstring>

namespace takt::engine {

void writeRange(const ImageRange& r, const std::uint8_t* in, std::uint8_t* base) noexcept {
    if (r.isBit) {
        const auto mask = static_cast<std::uint8_t>(1u << r.bit);
        base[r.offset] = static_cast<std::uint8_t>(*in != 0 ? (base[r.offset] | mask) : (base[r.offset] & ~mask));
    } else {
        std::memcpy(base + r.offset, in, r.size);
    }
}

namespace {

// The table was checked against the image it was built for; a range that does not fit (an area
// that shrank) is skipped rather than written out of bounds. valueBytes(): a bit entry needs its
// byte whatever `size` says.
bool fits(const ForceEntry& e, ImageArea area, std::size_t size) noexcept {
    return e.range.area == area && static_cast<std::size_t>(e.range.offset) + e.range.valueBytes() <= size &&
           (!e.range.isBit || e.range.bit <= 7);
}

} // namespace

void applyForces(const ForceTable& table, ImageArea area, std::uint8_t* base, std::size_t size) noexcept {
    for (const ForceEntry& e : table.entries) {
        if (fits(e, area, size)) {
            writeRange(e.range, table.values.data() + e.value, base);
        }
    }
}

void saveForcedInputs(const ForceTable& table, const std::uint8_t* base, std::size_t size) noexcept {
    if (table.field.size() != table.values.size()) {
        return;
    }
    for (const ForceEntry& e : table.entries) {
        if (fits(e, ImageArea::Input, size)) {
            readRange(e.range, base, table.field.data() + e.value);
        }
    }
}

void restoreForcedInputs(const ForceTable& table, std::uint8_t* base, std::size_t size) noexcept {
    if (table.field.size() != table.values.size()) {
        return;
    }
    for (auto it = table.entries.rbegin(); it != table.entries.rend(); ++it) {
        if (fits(*it, ImageArea::Input, size)) {
            writeRange(it->range, table.field.data() + it->value, base);
        }
    }
}

} // namespace takt::engine
