#include "mqtt_payload.h"

#include <array>
#include <cstring>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/common/json_number.h"
#include "takt/engine/values.h"

namespace takt::io::detail {

using bytecode::ValueKind;

bool parseValueType(std::string_view name, ValueType& out) {
    static constexpr std::array kCarried{
        ValueKind::Bool,  ValueKind::SInt,  ValueKind::Int,   ValueKind::DInt, ValueKind::LInt,  ValueKind::USInt,
        ValueKind::UInt,  ValueKind::UDInt, ValueKind::ULInt, ValueKind::Byte, ValueKind::Word,  ValueKind::DWord,
        ValueKind::LWord, ValueKind::Real,  ValueKind::LReal, ValueKind::Time, ValueKind::LTime, ValueKind::Date,
        ValueKind::LDate, ValueKind::Tod,   ValueKind::LTod,  ValueKind::Dt,   ValueKind::Ldt};
    std::string upper(name);
    for (char& c : upper) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (upper == "TIME_OF_DAY") {
        upper = "TOD";
    } else if (upper == "DATE_AND_TIME") {
        upper = "DT";
    }
    for (ValueKind k : kCarried) {
        if (engine::elementaryName(k) == upper) {
            out.kind = k;
            switch (k) {
            case ValueKind::Bool:
            case ValueKind::SInt:
            case ValueKind::USInt:
            case ValueKind::Byte: out.size = 1; break;
            case ValueKind::Int:
            case ValueKind::UInt:
            case ValueKind::Word: out.size = 2; break;
            case ValueKind::DInt:
            case ValueKind::UDInt:
            case ValueKind::DWord:
            case ValueKind::Real: out.size = 4; break;
            default: out.size = 8; break;
            }
            return true;
        }
    }
    return false;
}

bool decodePayload(std::string_view payload, const ValueType& type, std::uint8_t* out, std::string& error) {
    if (payload.size() > kMaxPayloadBytes) {
        error = fmt::format("payload of {} bytes exceeds {}", payload.size(), kMaxPayloadBytes);
        return false;
    }
    rapidjson::Document doc;
    // Iterative parsing: no recursion, so nesting depth cannot exhaust the stack. RapidJSON
    // itself refuses anything but whitespace after the value. Exact numbers: a REAL/LREAL
    // arrives as the nearest value, not one a few ulps off (json_number.h).
    if (const rapidjson::ParseResult r = common::parseJsonExact(doc, payload); r.IsError()) {
        error = fmt::format("not JSON: {} at offset {}", rapidjson::GetParseError_En(r.Code()), r.Offset());
        return false;
    }
    std::array<std::uint8_t, 8> scratch{};
    if (doc.IsNumber() || doc.IsBool()) {
        rapidjson::Value wrapped(rapidjson::kObjectType);
        rapidjson::Value v;
        v.CopyFrom(doc, doc.GetAllocator());
        wrapped.AddMember(
            rapidjson::StringRef(type.kind >= ValueKind::Time && type.kind <= ValueKind::Ldt ? "nanos" : "value"), v,
            doc.GetAllocator());
        if (!engine::decodeElementary(type.kind, type.size, 0, wrapped, scratch.data(), error)) {
            return false;
        }
    } else if (!engine::decodeElementary(type.kind, type.size, 0, doc, scratch.data(), error)) {
        return false;
    }
    std::memcpy(out, scratch.data(), type.size);
    return true;
}

std::string encodePayload(const ValueType& type, const std::uint8_t* data) {
    engine::JsonAllocator alloc;
    rapidjson::Value v;
    std::array<std::uint8_t, 8> scratch{};
    std::memcpy(scratch.data(), data, type.size);
    engine::encodeElementary(type.kind, scratch.data(), v, alloc);
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

} // namespace takt::io::detail
