// IEC literal text <-> typed JSON values (iec_literal.h). Parsing leans on the compiler's literal
// decoders so that "T#1h2m", "16#FF" or "'$N'" mean on the endpoint what they mean in source.
#include "takt/agent/iec_literal.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "takt/bytecode/calendar.h"
#include "takt/common/text.h"
#include "takt/compiler/literals.h"

namespace takt::agent {

namespace {

using bytecode::ValueKind;

enum class Family : std::uint8_t { Bool, Integer, BitString, Real, Duration, Date, Tod, Dt, Char, String, Other };

Family familyOf(ValueKind k) {
    switch (k) {
    case ValueKind::Bool: return Family::Bool;
    case ValueKind::SInt:
    case ValueKind::Int:
    case ValueKind::DInt:
    case ValueKind::LInt:
    case ValueKind::USInt:
    case ValueKind::UInt:
    case ValueKind::UDInt:
    case ValueKind::ULInt: return Family::Integer;
    case ValueKind::Byte:
    case ValueKind::Word:
    case ValueKind::DWord:
    case ValueKind::LWord: return Family::BitString;
    case ValueKind::Real:
    case ValueKind::LReal: return Family::Real;
    case ValueKind::Time:
    case ValueKind::LTime: return Family::Duration;
    case ValueKind::Date:
    case ValueKind::LDate: return Family::Date;
    case ValueKind::Tod:
    case ValueKind::LTod: return Family::Tod;
    case ValueKind::Dt:
    case ValueKind::Ldt: return Family::Dt;
    case ValueKind::Char:
    case ValueKind::WChar: return Family::Char;
    case ValueKind::String:
    case ValueKind::WString: return Family::String;
    default: return Family::Other;
    }
}

std::string upper(std::string_view s) {
    std::string r(s);
    for (char& c : r) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return r;
}

// The type prefixes a literal of `family` may carry before '#' (beside its own type name).
bool prefixFits(Family family, std::string_view kindName, std::string_view prefix) {
    const std::string p = upper(prefix);
    if (p == kindName) {
        return true;
    }
    const auto any = [&](std::initializer_list<std::string_view> names) {
        for (std::string_view n : names) {
            if (p == n) {
                return true;
            }
        }
        return false;
    };
    switch (family) {
    case Family::Bool: return p == "BOOL";
    case Family::Integer:
    case Family::BitString:
    case Family::Real:
        return any({"SINT", "INT", "DINT", "LINT", "USINT", "UINT", "UDINT", "ULINT", "BYTE", "WORD", "DWORD", "LWORD",
                    "REAL", "LREAL"});
    case Family::Duration: return any({"T", "TIME", "LT", "LTIME"});
    case Family::Date: return any({"D", "DATE", "LD", "LDATE"});
    case Family::Tod: return any({"TOD", "TIME_OF_DAY", "LTOD", "LTIME_OF_DAY"});
    case Family::Dt: return any({"DT", "DATE_AND_TIME", "LDT", "LDATE_AND_TIME"});
    default: return false;
    }
}

const char* example(Family family) {
    switch (family) {
    case Family::Bool: return "TRUE or FALSE";
    case Family::Integer: return "an integer such as 42, -7 or 16#FF";
    case Family::BitString: return "a bit string such as 16#00FF, 2#1010 or 255";
    case Family::Real: return "a number such as -1.5 or 2.0E3";
    case Family::Duration: return "a duration such as T#330ms or T#1h2m";
    case Family::Date: return "a date such as D#2024-01-15";
    case Family::Tod: return "a time of day such as TOD#12:30:00.5";
    case Family::Dt: return "a date and time such as DT#2024-01-15-12:30:00";
    case Family::Char: return "a character in quotes such as 'A'";
    case Family::String: return "a string in quotes such as 'text'";
    default: return "a typed JSON value";
    }
}

bool allDigits(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
            return false;
        }
    }
    return true;
}

void setString(rapidjson::Value& v, std::string_view s, engine::JsonAllocator& a) {
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

void typed(rapidjson::Value& out, std::string_view type, engine::JsonAllocator& a) {
    out.SetObject();
    rapidjson::Value t;
    setString(t, type, a);
    out.AddMember("type", t, a);
}

// "-16#FF" / "+5" / "INT#-3" (prefix already gone) -> value; a sign may precede a based number.
bool parseInteger(std::string_view body, rapidjson::Value& v, std::string& why) {
    bool negative = false;
    if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
        negative = body[0] == '-';
        body.remove_prefix(1);
    }
    std::uint64_t magnitude = 0;
    if (!compiler::decodeInteger(body, magnitude, why)) {
        return false;
    }
    if (!negative) {
        v.SetUint64(magnitude);
        return true;
    }
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
        why = fmt::format("-{} is below the range of every integer type", magnitude);
        return false;
    }
    v.SetInt64(magnitude == 0 ? 0 : static_cast<std::int64_t>(0 - magnitude));
    return true;
}

bool parseElementary(ValueKind kind, std::string_view text, rapidjson::Value& out, engine::JsonAllocator& a,
                     std::string& error) {
    const Family family = familyOf(kind);
    const std::string_view name = engine::elementaryName(kind);
    text = common::trim(text);
    std::string_view body = text;
    const bool quoted = !text.empty() && (text[0] == '\'' || text[0] == '"');
    std::string_view prefix = compiler::literalPrefix(text);
    // "-16#10": a signed based number, not a type prefix.
    const bool base = allDigits(!prefix.empty() && (prefix[0] == '-' || prefix[0] == '+') ? prefix.substr(1) : prefix);
    if (!quoted && !prefix.empty() && !base) {
        if (!prefixFits(family, name, prefix)) {
            error = fmt::format("'{}' is not a {} literal; expected {}", text, name, example(family));
            return false;
        }
        body = compiler::literalBody(text);
    }
    std::string why;
    rapidjson::Value v;
    bool ok = false;
    switch (family) {
    case Family::Bool: {
        const std::string b = upper(body);
        ok = b == "TRUE" || b == "FALSE" || b == "1" || b == "0";
        v.SetBool(b == "TRUE" || b == "1");
        break;
    }
    case Family::Integer:
    case Family::BitString: ok = parseInteger(body, v, why); break;
    case Family::Real: {
        double d = 0;
        ok = compiler::decodeReal(!body.empty() && body[0] == '+' ? body.substr(1) : body, d, why);
        v.SetDouble(d);
        break;
    }
    case Family::Duration:
    case Family::Date:
    case Family::Tod:
    case Family::Dt: {
        std::int64_t nanos = 0;
        ok = family == Family::Duration ? compiler::decodeDuration(body, nanos, why)
             : family == Family::Date   ? compiler::decodeDate(body, nanos, why)
             : family == Family::Tod    ? compiler::decodeTimeOfDay(body, nanos, why)
                                        : compiler::decodeDateAndTime(body, nanos, why);
        if (ok) {
            typed(out, name, a);
            out.AddMember("nanos", rapidjson::Value().SetInt64(nanos), a);
            return true;
        }
        break;
    }
    case Family::Char:
    case Family::String: {
        // STRING and CHAR take 'single' quotes; WSTRING and WCHAR "double" ones and, as typed at
        // a shell more easily, 'single' ones too.
        const bool wide = kind == ValueKind::WString || kind == ValueKind::WChar;
        std::string s;
        ok = compiler::decodeString(body, wide && !body.empty() && body[0] == '"', s, why);
        setString(v, s, a);
        break;
    }
    default: why = fmt::format("{} values have no literal form", name); break;
    }
    if (!ok) {
        error = fmt::format("'{}' is not a {} literal; expected {}{}{}", text, name, example(family),
                            why.empty() ? "" : ": ", why);
        return false;
    }
    typed(out, name, a);
    out.AddMember("value", v, a);
    return true;
}

bool parseEnum(const bytecode::TypeDesc& t, std::string_view text, rapidjson::Value& out, engine::JsonAllocator& a,
               std::string& error) {
    text = common::trim(text);
    std::string names;
    for (const bytecode::EnumValueDesc& e : t.enumValues) {
        names += fmt::format("{}{}#{}", names.empty() ? "" : ", ", t.name, e.name);
    }
    std::string_view body = text;
    if (const std::string_view prefix = compiler::literalPrefix(text); !prefix.empty()) {
        if (upper(prefix) != upper(t.name)) {
            error = fmt::format("'{}' is not a value of {}; expected one of {}", text, t.name, names);
            return false;
        }
        body = compiler::literalBody(text);
    }
    typed(out, "ENUM", a);
    for (const bytecode::EnumValueDesc& e : t.enumValues) {
        if (upper(e.name) == upper(body)) {
            rapidjson::Value v;
            setString(v, e.name, a);
            out.AddMember("variant", v, a);
            return true;
        }
    }
    rapidjson::Value n;
    std::string why;
    if (parseInteger(body, n, why)) {
        out.AddMember("numeric", n, a);
        return true;
    }
    error = fmt::format("'{}' is not a value of {}; expected one of {}", text, t.name, names);
    return false;
}

// ---- rendering ----------------------------------------------------------------------------

const rapidjson::Value* field(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) {
        return nullptr;
    }
    const auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string quote(std::string_view s, bool wide) {
    const char q = wide ? '"' : '\'';
    std::string out(1, q);
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '$' || c == q) {
            out += '$';
            out += c;
        } else if (c == '\n') {
            out += "$N";
        } else if (c == '\r') {
            out += "$R";
        } else if (c == '\t') {
            out += "$T";
        } else if (c == '\f') {
            out += "$P";
        } else if (u < 0x20 || u == 0x7F) {
            out += wide ? fmt::format("$00{:02X}", u) : fmt::format("${:02X}", u);
        } else {
            out += c;
        }
    }
    out += q;
    return out;
}

std::string realText(double d, bool single) {
    if (std::isnan(d)) {
        return "NaN";
    }
    std::string s = single ? fmt::format("{}", static_cast<float>(d)) : fmt::format("{}", d);
    const std::size_t e = s.find('e');
    const std::string_view mantissa = std::string_view(s).substr(0, e);
    std::string out(mantissa);
    if (out.find('.') == std::string::npos && out.find("inf") == std::string::npos) {
        out += ".0";
    }
    if (e != std::string::npos) {
        out += 'E';
        out += s.substr(e + 1);
    }
    return out;
}

// 93784005006007 ns -> "1d2h3m4s5ms6us7ns"; zero -> "0s".
std::string durationText(std::int64_t nanos) {
    std::string out = nanos < 0 ? "-" : "";
    // The magnitude of INT64_MIN does not fit an int64; it does fit a uint64.
    std::uint64_t n = nanos < 0 ? 0 - static_cast<std::uint64_t>(nanos) : static_cast<std::uint64_t>(nanos);
    if (n == 0) {
        return "0s";
    }
    static constexpr struct {
        std::uint64_t ns;
        const char* unit;
    } kUnits[] = {{86'400'000'000'000, "d"},
                  {3'600'000'000'000, "h"},
                  {60'000'000'000, "m"},
                  {1'000'000'000, "s"},
                  {1'000'000, "ms"},
                  {1'000, "us"},
                  {1, "ns"}};
    for (const auto& u : kUnits) {
        if (n >= u.ns) {
            out += fmt::format("{}{}", n / u.ns, u.unit);
            n %= u.ns;
        }
    }
    return out;
}

std::string dateText(std::int64_t days) {
    const bytecode::CivilDate c = bytecode::civilFromDays(days);
    return fmt::format("{:04}-{:02}-{:02}", c.year, c.month, c.day);
}

// Nanoseconds since midnight -> "12:30:00" or "12:30:00.5" (fraction without trailing zeros).
std::string todText(std::int64_t nanos) {
    constexpr std::int64_t kSecond = 1'000'000'000;
    const std::int64_t secs = nanos / kSecond;
    std::string out = fmt::format("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if (const std::int64_t frac = nanos % kSecond; frac != 0) {
        std::string digits = fmt::format("{:09}", frac);
        digits.erase(digits.find_last_not_of('0') + 1);
        out += "." + digits;
    }
    return out;
}

// Floor division: a date before 1970 is a negative count whose day starts at the lower multiple.
void splitDay(std::int64_t nanos, std::int64_t& days, std::int64_t& rest) {
    constexpr std::int64_t kDay = 86'400'000'000'000;
    days = nanos / kDay;
    rest = nanos % kDay;
    if (rest < 0) {
        rest += kDay;
        --days;
    }
}

} // namespace

bool parseIecLiteral(ValueKind kind, std::string_view text, rapidjson::Value& out, engine::JsonAllocator& alloc,
                     std::string& error) {
    return parseElementary(kind, text, out, alloc, error);
}

bool parseIecLiteral(const bytecode::Module& module, std::uint32_t type, std::string_view text, rapidjson::Value& out,
                     engine::JsonAllocator& alloc, std::string& error) {
    if (type >= module.types.size()) {
        error = "the variable has no type information";
        return false;
    }
    const bytecode::TypeDesc& t = module.types[type];
    switch (t.kind) {
    case ValueKind::Enum: return parseEnum(t, text, out, alloc, error);
    case ValueKind::Subrange:
        return parseIecLiteral(module, t.element < module.types.size() ? t.element : type, text, out, alloc, error);
    default:
        if (familyOf(t.kind) == Family::Other) {
            error = fmt::format("{} takes a typed JSON value (an object); literal text is for elementary and "
                                "enumerated types",
                                t.name);
            return false;
        }
        return parseElementary(t.kind, text, out, alloc, error);
    }
}

std::string formatIecLiteral(const rapidjson::Value& v) {
    const rapidjson::Value* type = field(v, "type");
    if (type == nullptr || !type->IsString()) {
        return "?";
    }
    const std::string t = upper(type->GetString());
    const rapidjson::Value* value = field(v, "value");
    const rapidjson::Value* nanos = field(v, "nanos");
    if (t == "ENUM") {
        const rapidjson::Value* name = field(v, "type_name");
        const rapidjson::Value* variant = field(v, "variant");
        const rapidjson::Value* numeric = field(v, "numeric");
        const std::string prefix = name != nullptr && name->IsString() ? name->GetString() : "";
        if (variant != nullptr && variant->IsString()) {
            return prefix + "#" + variant->GetString();
        }
        return fmt::format("{}#{}", prefix, numeric != nullptr && numeric->IsInt64() ? numeric->GetInt64() : 0);
    }
    if (t == "ARRAY") {
        std::string out = "[";
        if (const rapidjson::Value* elems = field(v, "elements"); elems != nullptr && elems->IsArray()) {
            for (const rapidjson::Value& e : elems->GetArray()) {
                out += (out.size() > 1 ? ", " : "") + formatIecLiteral(e);
            }
        }
        return out + "]";
    }
    if (t == "STRUCT") {
        std::string out = "(";
        if (const rapidjson::Value* fields = field(v, "fields"); fields != nullptr && fields->IsObject()) {
            for (auto it = fields->MemberBegin(); it != fields->MemberEnd(); ++it) {
                out += fmt::format("{}{} := {}", out.size() > 1 ? ", " : "", it->name.GetString(),
                                   formatIecLiteral(it->value));
            }
        }
        return out + ")";
    }
    if (t == "NULL") {
        return "NULL";
    }
    if (t == "REF") {
        return fmt::format("REF(16#{:08X})", value != nullptr && value->IsUint64() ? value->GetUint64() : 0);
    }
    if (nanos != nullptr && nanos->IsInt64()) {
        const std::int64_t n = nanos->GetInt64();
        std::int64_t days = 0;
        std::int64_t rest = 0;
        splitDay(n, days, rest);
        if (t == "TIME" || t == "LTIME") {
            return (t == "TIME" ? "T#" : "LTIME#") + durationText(n);
        }
        if (t == "DATE" || t == "LDATE") {
            return (t == "DATE" ? "D#" : "LDATE#") + dateText(days);
        }
        if (t == "TOD" || t == "LTOD") {
            return (t == "TOD" ? "TOD#" : "LTOD#") + todText(rest);
        }
        return (t == "DT" ? "DT#" : "LDT#") + dateText(days) + "-" + todText(rest);
    }
    if (value == nullptr) {
        return "?";
    }
    if (value->IsBool()) {
        return value->GetBool() ? "TRUE" : "FALSE";
    }
    if (value->IsString()) {
        const std::string_view s(value->GetString(), value->GetStringLength());
        if (t == "REAL" || t == "LREAL") {
            return std::string(s == "NaN" ? "NaN" : s == "Infinity" ? "+INF" : "-INF");
        }
        return quote(s, t == "WSTRING" || t == "WCHAR");
    }
    if (t == "REAL" || t == "LREAL") {
        return realText(value->GetDouble(), t == "REAL");
    }
    const int digits = t == "BYTE" ? 2 : t == "WORD" ? 4 : t == "DWORD" ? 8 : t == "LWORD" ? 16 : 0;
    if (digits != 0 && value->IsUint64()) {
        return fmt::format("16#{:0{}X}", value->GetUint64(), digits);
    }
    if (value->IsInt64()) {
        return std::to_string(value->GetInt64());
    }
    if (value->IsUint64()) {
        return std::to_string(value->GetUint64());
    }
    return realText(value->GetDouble(), false);
}

} // namespace takt::agent
