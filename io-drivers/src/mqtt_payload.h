#pragma once
// MQTT payloads of per-variable topics: typed JSON values (PROTOCOLS.md "Typed values"),
// `{"type":"INT","value":42}`; on subscribe a bare JSON number or boolean is accepted too.
// Only elementary kinds that fit a direct address are used (BOOL, integers, bit strings,
// REAL/LREAL, time and date kinds).
#include <cstdint>
#include <string>
#include <string_view>

#include "takt/bytecode/module.h"

namespace takt::io::detail {

constexpr std::size_t kMaxPayloadBytes = 64 * 1024; // larger payloads are refused unparsed

struct ValueType {
    bytecode::ValueKind kind = bytecode::ValueKind::Int;
    std::uint32_t size = 2; // bytes in the image; BOOL is one bit
};

// "INT", "lreal", "TIME_OF_DAY"… -> kind and size; false for names this driver does not carry.
[[nodiscard]] bool parseValueType(std::string_view name, ValueType& out);

// Decodes `payload` into `out` (size bytes, little-endian; BOOL as 0/1). False with `error`
// and `out` untouched on anything malformed, of the wrong type, or out of range.
[[nodiscard]] bool decodePayload(std::string_view payload, const ValueType& type, std::uint8_t* out,
                                 std::string& error);

// `{"type":"INT","value":42}` for the value at `data`.
[[nodiscard]] std::string encodePayload(const ValueType& type, const std::uint8_t* data);

} // namespace takt::io::detail
