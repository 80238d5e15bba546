// Typed JSON values (PROTOCOLS.md). Storage assumptions shared with the VM: little-endian
// host order; BOOL is one byte 0/1; every time and date kind is an int64 count of nanoseconds
// (DATE/DT from 1970-01-01, TOD from midnight); STRING[n] is n bytes plus a NUL, WSTRING[n]
// is n UTF-16 code units plus a NUL unit; REF_TO is a uint32 image offset, 0 meaning NULL.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "takt/common/text.h"

#include "takt/engine/values.h"

namespace takt::engine {
namespace {

using bytecode::Module;
using bytecode::TypeDesc;
using bytecode::ValueKind;

enum class Category : std::uint8_t { Bool, Signed, Unsigned, Real, Time, Char, String, Other };

struct KindInfo {
    std::string_view name;
    Category category;
    std::uint32_t size;
};

KindInfo kindInfo(ValueKind k) {
    switch (k) {
    case ValueKind::Bool: return {"BOOL", Category::Bool, 1};
    case ValueKind::SInt: return {"SINT", Category::Signed, 1};
    case ValueKind::Int: return {"INT", Category::Signed, 2};
    case ValueKind::DInt: return {"DINT", Category::Signed, 4};
    case ValueKind::LInt: return {"LINT", Category::Signed, 8};
    case ValueKind::USInt: return {"USINT", Category::Unsigned, 1};
    case ValueKind::UInt: return {"UINT", Category::Unsigned, 2};
    case ValueKind::UDInt: return {"UDINT", Category::Unsigned, 4};
    case ValueKind::ULInt: return {"ULINT", Category::Unsigned, 8};
    case ValueKind::Byte: return {"BYTE", Category::Unsigned, 1};
    case ValueKind::Word: return {"WORD", Category::Unsigned, 2};
    case ValueKind::DWord: return {"DWORD", Category::Unsigned, 4};
    case ValueKind::LWord: return {"LWORD", Category::Unsigned, 8};
    case ValueKind::Real: return {"REAL", Category::Real, 4};
    case ValueKind::LReal: return {"LREAL", Category::Real, 8};
    case ValueKind::Time: return {"TIME", Category::Time, 8};
    case ValueKind::LTime: return {"LTIME", Category::Time, 8};
    case ValueKind::Date: return {"DATE", Category::Time, 8};
    case ValueKind::LDate: return {"LDATE", Category::Time, 8};
    case ValueKind::Tod: return {"TOD", Category::Time, 8};
    case ValueKind::LTod: return {"LTOD", Category::Time, 8};
    case ValueKind::Dt: return {"DT", Category::Time, 8};
    case ValueKind::Ldt: return {"LDT", Category::Time, 8};
    case ValueKind::Char: return {"CHAR", Category::Char, 1};
    case ValueKind::WChar: return {"WCHAR", Category::Char, 2};
    case ValueKind::String: return {"STRING", Category::String, 0};
    case ValueKind::WString: return {"WSTRING", Category::String, 0};
    default: return {"", Category::Other, 0};
    }
}

bool numericCategory(Category c) {
    return c == Category::Signed || c == Category::Unsigned || c == Category::Real;
}

// Accepted spellings of elementary type names that differ from the canonical ones.
std::string upper(std::string_view s) {
    std::string r(s);
    for (char& c : r) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (r == "TIME_OF_DAY") {
        return "TOD";
    }
    if (r == "DATE_AND_TIME") {
        return "DT";
    }
    return r;
}

Category categoryOfName(std::string_view name) {
    static constexpr ValueKind kAll[] = {
        ValueKind::Bool,  ValueKind::SInt,   ValueKind::Int,    ValueKind::DInt, ValueKind::LInt,  ValueKind::USInt,
        ValueKind::UInt,  ValueKind::UDInt,  ValueKind::ULInt,  ValueKind::Byte, ValueKind::Word,  ValueKind::DWord,
        ValueKind::LWord, ValueKind::Real,   ValueKind::LReal,  ValueKind::Time, ValueKind::LTime, ValueKind::Date,
        ValueKind::LDate, ValueKind::Tod,    ValueKind::LTod,   ValueKind::Dt,   ValueKind::Ldt,   ValueKind::Char,
        ValueKind::WChar, ValueKind::String, ValueKind::WString};
    const std::string u = upper(name);
    for (ValueKind k : kAll) {
        if (kindInfo(k).name == u) {
            return kindInfo(k).category;
        }
    }
    return Category::Other;
}

std::int64_t readSigned(const std::uint8_t* p, std::uint32_t size) {
    switch (size) {
    case 1: {
        std::int8_t v;
        std::memcpy(&v, p, 1);
        return v;
    }
    case 2: {
        std::int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}

std::uint64_t readUnsigned(const std::uint8_t* p, std::uint32_t size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, size > 8 ? 8 : size); // little-endian host
    return v;
}

void writeBytes(std::uint8_t* p, std::uint64_t v, std::uint32_t size) {
    std::memcpy(p, &v, size > 8 ? 8 : size);
}

// UTF-8 -> UTF-16 code units; false on malformed input.
bool toUtf16(std::string_view s, std::vector<std::uint16_t>& out) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::uint32_t cp = 0;
        std::size_t n = 0;
        if (c < 0x80) {
            cp = c;
            n = 1;
        } else if ((c & 0xE0) == 0xC0) {
            cp = c & 0x1Fu;
            n = 2;
        } else if ((c & 0xF0) == 0xE0) {
            cp = c & 0x0Fu;
            n = 3;
        } else if ((c & 0xF8) == 0xF0) {
            cp = c & 0x07u;
            n = 4;
        } else {
            return false;
        }
        if (i + n > s.size()) {
            return false;
        }
        for (std::size_t k = 1; k < n; ++k) {
            cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
        }
        i += n;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            out.push_back(static_cast<std::uint16_t>(0xD800 + (cp >> 10)));
            out.push_back(static_cast<std::uint16_t>(0xDC00 + (cp & 0x3FF)));
        } else {
            out.push_back(static_cast<std::uint16_t>(cp));
        }
    }
    return true;
}

void setString(rapidjson::Value& v, std::string_view s, JsonAllocator& a) {
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

void typedObject(rapidjson::Value& out, std::string_view type, JsonAllocator& a) {
    out.SetObject();
    rapidjson::Value t;
    setString(t, type, a);
    out.AddMember("type", t, a);
}

const rapidjson::Value* member(const rapidjson::Value& in, const char* name) {
    auto it = in.FindMember(name);
    return it == in.MemberEnd() ? nullptr : &it->value;
}

// Reads a JSON number as an exact integer within [lo, hi] (signed) — 64-bit exact.
bool integerInRange(const rapidjson::Value& v, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (v.IsInt64()) {
        out = v.GetInt64();
        return out >= lo && out <= hi;
    }
    if (v.IsUint64()) {
        return false; // above INT64_MAX
    }
    if (v.IsDouble()) {
        const double d = v.GetDouble();
        if (std::trunc(d) != d || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18) {
            return false;
        }
        out = static_cast<std::int64_t>(d);
        return out >= lo && out <= hi;
    }
    return false;
}

bool unsignedInRange(const rapidjson::Value& v, std::uint64_t hi, std::uint64_t& out) {
    if (v.IsUint64()) {
        out = v.GetUint64();
        return out <= hi;
    }
    if (v.IsInt64()) {
        return false; // negative
    }
    if (v.IsDouble()) {
        const double d = v.GetDouble();
        if (std::trunc(d) != d || d < 0 || d >= 1.8446744073709552e19) {
            return false;
        }
        out = static_cast<std::uint64_t>(d);
        return out <= hi;
    }
    return false;
}

std::string describeJson(const rapidjson::Value& v) {
    if (v.IsInt64()) {
        return std::to_string(v.GetInt64());
    }
    if (v.IsUint64()) {
        return std::to_string(v.GetUint64());
    }
    if (v.IsDouble()) {
        return fmt::format("{}", v.GetDouble());
    }
    if (v.IsBool()) {
        return v.GetBool() ? "true" : "false";
    }
    if (v.IsString()) {
        return fmt::format("'{}'", v.GetString());
    }
    return "a non-scalar value";
}

} // namespace

bool bookkeepingMember(const bytecode::TypeDesc& owner, std::string_view field) {
    return field.find('$') != std::string_view::npos ||
           (owner.kind == ValueKind::Struct && owner.name == "SFC_STEP" && field.starts_with('_'));
}

bool bookkeepingPath(std::string_view path) {
    return path.find('$') != std::string_view::npos;
}

std::string_view elementaryName(ValueKind kind) {
    return kindInfo(kind).name;
}

void encodeElementary(ValueKind kind, const std::uint8_t* p, rapidjson::Value& out, JsonAllocator& a) {
    const KindInfo info = kindInfo(kind);
    typedObject(out, info.name, a);
    rapidjson::Value v;
    switch (info.category) {
    case Category::Bool: v.SetBool(p[0] != 0); break;
    case Category::Signed: v.SetInt64(readSigned(p, info.size)); break;
    case Category::Unsigned: v.SetUint64(readUnsigned(p, info.size)); break;
    case Category::Real: {
        double d = 0;
        if (info.size == 4) {
            float f;
            std::memcpy(&f, p, 4);
            d = static_cast<double>(f);
        } else {
            std::memcpy(&d, p, 8);
        }
        // JSON has no NaN or infinities (a writer stops at them): they travel as the strings
        // "NaN", "Infinity" and "-Infinity", which decoding accepts back.
        if (std::isnan(d)) {
            v.SetString("NaN", a);
        } else if (std::isinf(d)) {
            v.SetString(d > 0 ? "Infinity" : "-Infinity", a);
        } else {
            v.SetDouble(d);
        }
        break;
    }
    case Category::Time: {
        rapidjson::Value n;
        n.SetInt64(readSigned(p, 8));
        out.AddMember("nanos", n, a);
        return;
    }
    case Category::Char: {
        std::string s;
        const std::uint32_t cp = info.size == 1 ? p[0] : static_cast<std::uint32_t>(readUnsigned(p, 2));
        if (cp != 0) {
            if (info.size == 1) {
                s += static_cast<char>(cp);
            } else {
                common::appendUtf8(s, cp);
            }
        }
        setString(v, s, a);
        break;
    }
    default:
        out.SetObject();
        typedObject(out, "NULL", a);
        return;
    }
    out.AddMember("value", v, a);
}

void encodeValue(const Module& m, std::uint32_t type, const std::uint8_t* p, rapidjson::Value& out, JsonAllocator& a) {
    if (type >= m.types.size()) {
        typedObject(out, "NULL", a);
        return;
    }
    const TypeDesc& t = m.types[type];
    switch (t.kind) {
    case ValueKind::String: {
        std::size_t n = 0;
        while (n < t.stringLength && n < t.size && p[n] != 0) {
            ++n;
        }
        typedObject(out, "STRING", a);
        rapidjson::Value v;
        v.SetString(reinterpret_cast<const char*>(p), static_cast<rapidjson::SizeType>(n), a);
        out.AddMember("value", v, a);
        return;
    }
    case ValueKind::WString: {
        std::string s;
        for (std::size_t i = 0; i < t.stringLength && 2 * i + 1 < t.size; ++i) {
            std::uint32_t u = static_cast<std::uint32_t>(readUnsigned(p + 2 * i, 2));
            if (u == 0) {
                break;
            }
            if (u >= 0xD800 && u < 0xDC00 && i + 1 < t.stringLength) {
                const auto lo = static_cast<std::uint32_t>(readUnsigned(p + 2 * (i + 1), 2));
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                ++i;
            }
            common::appendUtf8(s, u);
        }
        typedObject(out, "WSTRING", a);
        rapidjson::Value v;
        setString(v, s, a);
        out.AddMember("value", v, a);
        return;
    }
    case ValueKind::Subrange:
        if (t.element < m.types.size()) {
            encodeValue(m, t.element, p, out, a);
        } else {
            encodeElementary(ValueKind::Int, p, out, a);
        }
        return;
    case ValueKind::Enum: {
        const std::uint32_t size = t.element < m.types.size() ? m.types[t.element].size : (t.size == 0 ? 2 : t.size);
        const std::int64_t value = readSigned(p, size);
        typedObject(out, "ENUM", a);
        rapidjson::Value name;
        setString(name, t.name, a);
        out.AddMember("type_name", name, a);
        rapidjson::Value variant;
        variant.SetNull();
        for (const bytecode::EnumValueDesc& e : t.enumValues) {
            if (e.value == value) {
                setString(variant, e.name, a);
                break;
            }
        }
        out.AddMember("variant", variant, a);
        out.AddMember("numeric", rapidjson::Value().SetInt64(value), a);
        return;
    }
    case ValueKind::Array: {
        typedObject(out, "ARRAY", a);
        rapidjson::Value dims(rapidjson::kArrayType);
        std::uint64_t count = 1;
        for (std::size_t d = 0; d + 1 < t.bounds.size(); d += 2) {
            rapidjson::Value pair(rapidjson::kArrayType);
            pair.PushBack(rapidjson::Value().SetInt64(t.bounds[d]), a);
            pair.PushBack(rapidjson::Value().SetInt64(t.bounds[d + 1]), a);
            dims.PushBack(pair, a);
            count *= static_cast<std::uint64_t>(t.bounds[d + 1] - t.bounds[d] + 1);
        }
        out.AddMember("dimensions", dims, a);
        rapidjson::Value elems(rapidjson::kArrayType);
        if (t.element < m.types.size()) {
            const std::uint32_t stride = m.types[t.element].size;
            for (std::uint64_t i = 0; i < count; ++i) {
                rapidjson::Value e;
                encodeValue(m, t.element, p + i * stride, e, a);
                elems.PushBack(e, a);
            }
        }
        out.AddMember("elements", elems, a);
        return;
    }
    case ValueKind::Struct:
    case ValueKind::FunctionBlock:
    case ValueKind::Program: {
        typedObject(out, "STRUCT", a);
        rapidjson::Value name;
        setString(name, t.name, a);
        out.AddMember("type_name", name, a);
        rapidjson::Value fields(rapidjson::kObjectType);
        for (const bytecode::FieldDesc& f : t.fields) {
            if (bookkeepingMember(t, f.name)) {
                continue;
            }
            rapidjson::Value key;
            setString(key, f.name, a);
            rapidjson::Value fv;
            encodeValue(m, f.type, p + f.offset, fv, a);
            fields.AddMember(key, fv, a);
        }
        out.AddMember("fields", fields, a);
        return;
    }
    case ValueKind::Ref:
    case ValueKind::Interface: {
        const std::uint64_t target = readUnsigned(p, 4);
        if (target == 0 || target == bytecode::kNone) {
            typedObject(out, "NULL", a);
        } else {
            typedObject(out, "REF", a);
            out.AddMember("value", rapidjson::Value().SetUint64(target), a);
        }
        return;
    }
    default: encodeElementary(t.kind, p, out, a); return;
    }
}

bool decodeElementary(ValueKind kind, std::uint32_t size, std::uint32_t stringLength, const rapidjson::Value& in,
                      std::uint8_t* p, std::string& error) {
    const KindInfo info = kindInfo(kind);
    if (!in.IsObject()) {
        error = fmt::format("expected a typed value object for {}", info.name);
        return false;
    }
    if (const rapidjson::Value* ty = member(in, "type"); ty != nullptr) {
        if (!ty->IsString()) {
            error = "'type' must be a string";
            return false;
        }
        const Category given = categoryOfName(ty->GetString());
        const bool compatible = given == info.category || (numericCategory(given) && numericCategory(info.category)) ||
                                (given == Category::Char && info.category == Category::String) ||
                                (given == Category::String && info.category == Category::Char);
        if (!compatible) {
            error = fmt::format("a {} value cannot be assigned to {}", ty->GetString(), info.name);
            return false;
        }
    }
    const rapidjson::Value* v = member(in, info.category == Category::Time ? "nanos" : "value");
    if (v == nullptr && info.category == Category::Time) {
        v = member(in, "value");
    }
    if (v == nullptr) {
        error = fmt::format("missing '{}' for {}", info.category == Category::Time ? "nanos" : "value", info.name);
        return false;
    }
    const auto notFit = [&] {
        error = fmt::format("value {} does not fit {}", describeJson(*v), info.name);
        return false;
    };
    switch (info.category) {
    case Category::Bool:
        if (!v->IsBool()) {
            return notFit();
        }
        p[0] = v->GetBool() ? 1 : 0;
        return true;
    case Category::Signed: {
        const int bits = static_cast<int>(info.size * 8);
        const std::int64_t hi =
            bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1;
        const std::int64_t lo = -hi - 1;
        std::int64_t x = 0;
        if (!integerInRange(*v, lo, hi, x)) {
            return notFit();
        }
        writeBytes(p, static_cast<std::uint64_t>(x), info.size);
        return true;
    }
    case Category::Unsigned: {
        const int bits = static_cast<int>(info.size * 8);
        const std::uint64_t hi =
            bits == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
        std::uint64_t x = 0;
        if (!unsignedInRange(*v, hi, x)) {
            return notFit();
        }
        writeBytes(p, x, info.size);
        return true;
    }
    case Category::Real: {
        double d = 0;
        if (v->IsString()) {
            const std::string_view text(v->GetString(), v->GetStringLength());
            if (text == "NaN") {
                d = std::numeric_limits<double>::quiet_NaN();
            } else if (text == "Infinity" || text == "-Infinity") {
                d = text[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
            } else {
                return notFit();
            }
        } else if (v->IsNumber()) {
            d = v->GetDouble();
        } else {
            return notFit();
        }
        if (info.size == 4) {
            if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
                return notFit();
            }
            const auto f = static_cast<float>(d);
            std::memcpy(p, &f, 4);
        } else {
            std::memcpy(p, &d, 8);
        }
        return true;
    }
    case Category::Time: {
        std::int64_t x = 0;
        if (!integerInRange(*v, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                            x)) {
            return notFit();
        }
        writeBytes(p, static_cast<std::uint64_t>(x), 8);
        return true;
    }
    case Category::Char: {
        if (!v->IsString()) {
            return notFit();
        }
        std::vector<std::uint16_t> units;
        const std::string_view s(v->GetString(), v->GetStringLength());
        if (info.size == 1) {
            if (s.size() > 1) {
                return notFit();
            }
            p[0] = s.empty() ? 0 : static_cast<std::uint8_t>(s[0]);
            return true;
        }
        if (!toUtf16(s, units) || units.size() > 1) {
            return notFit();
        }
        writeBytes(p, units.empty() ? 0 : units[0], 2);
        return true;
    }
    case Category::String: {
        if (!v->IsString()) {
            return notFit();
        }
        const std::string_view s(v->GetString(), v->GetStringLength());
        if (kind == ValueKind::String) {
            if (s.size() > stringLength || s.size() >= size) {
                error = fmt::format("string of {} bytes does not fit STRING[{}]", s.size(), stringLength);
                return false;
            }
            std::memcpy(p, s.data(), s.size());
            std::memset(p + s.size(), 0, size - s.size());
            return true;
        }
        std::vector<std::uint16_t> units;
        if (!toUtf16(s, units)) {
            error = "WSTRING value is not valid UTF-8";
            return false;
        }
        if (units.size() > stringLength || 2 * units.size() >= size) {
            error = fmt::format("string of {} characters does not fit WSTRING[{}]", units.size(), stringLength);
            return false;
        }
        std::memset(p, 0, size);
        for (std::size_t i = 0; i < units.size(); ++i) {
            writeBytes(p + 2 * i, units[i], 2);
        }
        return true;
    }
    default: error = "unsupported type"; return false;
    }
}

bool decodeValue(const Module& m, std::uint32_t type, const rapidjson::Value& in, std::uint8_t* p, std::string& error) {
    if (type >= m.types.size()) {
        error = "variable has no type information";
        return false;
    }
    const TypeDesc& t = m.types[type];
    if (!in.IsObject()) {
        error = fmt::format("expected a typed value object for {}", t.name);
        return false;
    }
    const rapidjson::Value* ty = member(in, "type");
    const std::string given = ty != nullptr && ty->IsString() ? upper(ty->GetString()) : std::string();
    switch (t.kind) {
    case ValueKind::Subrange: {
        if (t.element >= m.types.size()) {
            error = "subrange has no base type";
            return false;
        }
        std::vector<std::uint8_t> scratch(m.types[t.element].size + 8, 0);
        if (!decodeValue(m, t.element, in, scratch.data(), error)) {
            return false;
        }
        const std::int64_t x = readSigned(scratch.data(), m.types[t.element].size);
        if (t.bounds.size() >= 2 && (x < t.bounds[0] || x > t.bounds[1])) {
            error = fmt::format("value {} is outside {} ({}..{})", x, t.name, t.bounds[0], t.bounds[1]);
            return false;
        }
        std::memcpy(p, scratch.data(), m.types[t.element].size);
        return true;
    }
    case ValueKind::Enum: {
        const std::uint32_t size = t.element < m.types.size() ? m.types[t.element].size : (t.size == 0 ? 2 : t.size);
        if (!given.empty() && given != "ENUM" && given != upper(t.name)) {
            error = fmt::format("a {} value cannot be assigned to {}", given, t.name);
            return false;
        }
        if (const rapidjson::Value* var = member(in, "variant"); var != nullptr && var->IsString()) {
            for (const bytecode::EnumValueDesc& e : t.enumValues) {
                if (upper(e.name) == upper(var->GetString())) {
                    writeBytes(p, static_cast<std::uint64_t>(e.value), size);
                    return true;
                }
            }
            error = fmt::format("'{}' is not a value of {}", var->GetString(), t.name);
            return false;
        }
        const rapidjson::Value* num = member(in, "numeric");
        if (num == nullptr) {
            num = member(in, "value");
        }
        std::int64_t x = 0;
        if (num == nullptr || !integerInRange(*num, std::numeric_limits<std::int64_t>::min(),
                                              std::numeric_limits<std::int64_t>::max(), x)) {
            error = fmt::format("ENUM value for {} needs 'variant' or 'numeric'", t.name);
            return false;
        }
        for (const bytecode::EnumValueDesc& e : t.enumValues) {
            if (e.value == x) {
                writeBytes(p, static_cast<std::uint64_t>(x), size);
                return true;
            }
        }
        error = fmt::format("{} is not a value of {}", x, t.name);
        return false;
    }
    case ValueKind::Array: {
        const rapidjson::Value* elems = member(in, "elements");
        if ((!given.empty() && given != "ARRAY") || elems == nullptr || !elems->IsArray() ||
            t.element >= m.types.size()) {
            error = fmt::format("expected an ARRAY value with 'elements' for {}", t.name);
            return false;
        }
        std::uint64_t count = 1;
        for (std::size_t d = 0; d + 1 < t.bounds.size(); d += 2) {
            count *= static_cast<std::uint64_t>(t.bounds[d + 1] - t.bounds[d] + 1);
        }
        if (elems->Size() != count) {
            error = fmt::format("{} has {} elements, {} given", t.name, count, elems->Size());
            return false;
        }
        const std::uint32_t stride = m.types[t.element].size;
        for (rapidjson::SizeType i = 0; i < elems->Size(); ++i) {
            if (!decodeValue(m, t.element, (*elems)[i], p + static_cast<std::size_t>(i) * stride, error)) {
                error = fmt::format("element {}: {}", i, error);
                return false;
            }
        }
        return true;
    }
    case ValueKind::Struct:
    case ValueKind::FunctionBlock:
    case ValueKind::Program: {
        const rapidjson::Value* fields = member(in, "fields");
        if ((!given.empty() && given != "STRUCT") || fields == nullptr || !fields->IsObject()) {
            error = fmt::format("expected a STRUCT value with 'fields' for {}", t.name);
            return false;
        }
        for (auto it = fields->MemberBegin(); it != fields->MemberEnd(); ++it) {
            const bytecode::FieldDesc* f = nullptr;
            for (const bytecode::FieldDesc& cand : t.fields) {
                if (upper(cand.name) == upper(it->name.GetString())) {
                    f = &cand;
                }
            }
            if (f == nullptr) {
                error = fmt::format("{} has no field '{}'", t.name, it->name.GetString());
                return false;
            }
            if (!decodeValue(m, f->type, it->value, p + f->offset, error)) {
                error = fmt::format("field '{}': {}", f->name, error);
                return false;
            }
        }
        return true;
    }
    case ValueKind::Ref:
    case ValueKind::Interface:
        if (given != "NULL") {
            error = fmt::format("only NULL can be written to {}", t.name);
            return false;
        }
        writeBytes(p, 0, 4);
        return true;
    default: return decodeElementary(t.kind, t.size, t.stringLength, in, p, error);
    }
}

} // namespace takt::engine
