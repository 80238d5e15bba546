#include "takt/engine/scan_command.h"

#include <cstring>

namespace takt::engine {

void readRange(const ImageRange& r, const std::uint8_t* base, std::uint8_t* out) noexcept {
    if (r.isBit) {
        *out = static_cast<std::uint8_t>((base[r.offset] >> r.bit) & 1u);
    } else {
        std::memcpy(out, base + r.offset, r.size);
    }
}

void writeRange(const ImageRange& r, const std::uint8_t* in, std::uint8_t* base) noexcept {
    if (r.isBit) {
        const auto mask = static_cast<std::uint8_t>(1u << r.bit);
        base[r.offset] = static_cast<std::uint8_t>(*in != 0 ? (base[r.offset] | mask) : (base[r.offset] & ~mask));
    } else {
        std::memcpy(base + r.offset, in, r.size);
    }
}

void applyForces(const ForceTable& table, ImageArea area, std::uint8_t* base, std::size_t size) noexcept {
    for (const ForceEntry& e : table.entries) {
        // The table was checked against the image it was built for; a range that does not fit
        // (an area that shrank) is skipped rather than written out of bounds.
        // valueBytes(): a bit entry needs its byte whatever `size` says.
        if (e.range.area != area || static_cast<std::size_t>(e.range.offset) + e.range.valueBytes() > size ||
            (e.range.isBit && e.range.bit > 7)) {
            continue;
        }
        writeRange(e.range, table.values.data() + e.value, base);
    }
}

} // namespace takt::engine
