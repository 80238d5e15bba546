#pragma once
// Bytes as lowercase hex, two digits each: the process image in logs, session tokens and login
// handles.
#include <cstdint>
#include <span>
#include <string>

namespace takt::common {

[[nodiscard]] inline std::string hexBytes(std::span<const std::uint8_t> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const std::uint8_t b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 0x0f];
    }
    return out;
}

} // namespace takt::common
