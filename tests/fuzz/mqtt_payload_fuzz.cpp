// libFuzzer target for the mqtt driver's payload parser (typed JSON values on subscribed
// topics). The first byte picks the declared type; the rest is the payload as a broker would
// deliver it. Whatever the bytes: no crash, no write past the value's size, and an accepted
// value re-encodes to a payload that decodes to the same bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "mqtt_payload.h"

namespace {

constexpr std::array<std::string_view, 23> kTypes{"BOOL",  "SINT", "INT",   "DINT",  "LINT",  "USINT", "UINT",  "UDINT",
                                                  "ULINT", "BYTE", "WORD",  "DWORD", "LWORD", "REAL",  "LREAL", "TIME",
                                                  "LTIME", "DATE", "LDATE", "TOD",   "LTOD",  "DT",    "LDT"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    takt::io::detail::ValueType type;
    if (!takt::io::detail::parseValueType(kTypes[data[0] % kTypes.size()], type)) {
        std::abort();
    }
    const std::string_view payload(reinterpret_cast<const char*>(data + 1), size - 1);
    std::array<std::uint8_t, 16> out{};
    out.fill(0xA5);
    std::string error;
    if (!takt::io::detail::decodePayload(payload, type, out.data(), error)) {
        for (std::uint8_t b : out) {
            if (b != 0xA5) {
                std::abort(); // a rejected payload wrote something
            }
        }
        return 0;
    }
    for (std::size_t i = type.size; i < out.size(); ++i) {
        if (out[i] != 0xA5) {
            std::abort(); // wrote past the value
        }
    }
    const std::string again = takt::io::detail::encodePayload(type, out.data());
    std::array<std::uint8_t, 16> back{};
    if (!takt::io::detail::decodePayload(again, type, back.data(), error)) {
        std::abort();
    }
    // JSON has no NaN, so REAL/LREAL bytes compare exactly too.
    if (std::memcmp(out.data(), back.data(), type.size) != 0) {
        std::abort();
    }
    return 0;
}
