#include "takt/compiler/literals.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "takt/bytecode/address.h"
#include "takt/bytecode/calendar.h"
#include "takt/common/text.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

// 128-bit accumulation makes overflow checks of nanosecond sums trivial.
__extension__ typedef __int128 Int128;

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kNsPerDay = 86'400 * kNsPerSecond;

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

char upper(char c) {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = upper(c);
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Reads decimal digits (with '_' separators between them) at `pos`; false when none.
bool readDecimal(std::string_view s, std::size_t& pos, std::uint64_t& value, bool& overflow) {
    std::size_t start = pos;
    value = 0;
    overflow = false;
    while (pos < s.size() && (isDigit(s[pos]) || (s[pos] == '_' && pos > start))) {
        if (s[pos] != '_') {
            auto digit = static_cast<std::uint64_t>(s[pos] - '0');
            if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
                overflow = true;
            } else {
                value = value * 10 + digit;
            }
        }
        ++pos;
    }
    return pos > start;
}

// Reads exactly the digits of a date/time field ("2024", "05"); false when none.
bool readField(std::string_view s, std::size_t& pos, std::int64_t& value) {
    std::size_t start = pos;
    value = 0;
    while (pos < s.size() && isDigit(s[pos]) && pos - start < 10) {
        value = value * 10 + (s[pos] - '0');
        ++pos;
    }
    return pos > start;
}

using bytecode::daysFromCivil;
using bytecode::daysInMonth;

// YYYY-MM-DD at `pos`; days since the epoch.
bool parseDatePart(std::string_view s, std::size_t& pos, std::int64_t& days, std::string& error) {
    std::int64_t y = 0;
    std::int64_t m = 0;
    std::int64_t d = 0;
    if (!readField(s, pos, y) || pos >= s.size() || s[pos++] != '-' || !readField(s, pos, m) || pos >= s.size() ||
        s[pos++] != '-' || !readField(s, pos, d)) {
        error = fmt::format("date '{}' is not of the form YYYY-MM-DD", s);
        return false;
    }
    // The nanosecond range of a 64-bit value covers 1677-09-21 .. 2262-04-11; keep whole years.
    if (y < bytecode::kFirstYear || y > bytecode::kLastYear) {
        error = fmt::format("year {} in '{}' is outside {}..{}", y, s, bytecode::kFirstYear, bytecode::kLastYear);
        return false;
    }
    if (m < 1 || m > 12) {
        error = fmt::format("month {} in '{}' is outside 1..12", m, s);
        return false;
    }
    if (d < 1 || d > daysInMonth(y, m)) {
        error = fmt::format("day {} in '{}' does not exist in month {}", d, s, m);
        return false;
    }
    days = daysFromCivil(y, m, d);
    return true;
}

// HH:MM[:SS[.fff]] at `pos`; nanoseconds since midnight. Consumes to the end of `s`.
bool parseTimePart(std::string_view s, std::size_t& pos, std::int64_t& nanos, std::string& error) {
    std::int64_t h = 0;
    std::int64_t m = 0;
    std::int64_t sec = 0;
    std::int64_t frac = 0;
    if (!readField(s, pos, h) || pos >= s.size() || s[pos++] != ':' || !readField(s, pos, m)) {
        error = fmt::format("time of day '{}' is not of the form HH:MM:SS", s);
        return false;
    }
    if (pos < s.size() && s[pos] == ':') {
        ++pos;
        if (!readField(s, pos, sec)) {
            error = fmt::format("time of day '{}' has no seconds after ':'", s);
            return false;
        }
        if (pos < s.size() && s[pos] == '.') {
            ++pos;
            std::int64_t scale = kNsPerSecond;
            std::size_t start = pos;
            while (pos < s.size() && isDigit(s[pos])) {
                scale /= 10;
                frac += (s[pos] - '0') * scale;
                ++pos;
            }
            if (pos == start) {
                error = fmt::format("time of day '{}' has no digits after '.'", s);
                return false;
            }
        }
    }
    if (pos != s.size()) {
        error = fmt::format("unexpected '{}' in time of day '{}'", s.substr(pos), s);
        return false;
    }
    if (h > 23 || m > 59 || sec > 59) {
        error = fmt::format("time of day '{}' is out of range (hour 0..23, minute and second 0..59)", s);
        return false;
    }
    nanos = ((h * 60 + m) * 60 + sec) * kNsPerSecond + frac;
    return true;
}

} // namespace

std::string_view literalBody(std::string_view text) {
    std::size_t hash = text.find('#');
    return hash == std::string_view::npos ? text : text.substr(hash + 1);
}

std::string_view literalPrefix(std::string_view text) {
    std::size_t hash = text.find('#');
    return hash == std::string_view::npos ? std::string_view{} : text.substr(0, hash);
}

bool decodeInteger(std::string_view text, std::uint64_t& value, std::string& error) {
    std::size_t hash = text.find('#');
    if (hash == std::string_view::npos) {
        std::size_t pos = 0;
        bool overflow = false;
        if (!readDecimal(text, pos, value, overflow) || pos != text.size()) {
            error = fmt::format("malformed integer literal '{}'", text);
            return false;
        }
        if (overflow) {
            error = fmt::format("integer literal '{}' does not fit in 64 bits", text);
            return false;
        }
        return true;
    }
    std::string_view baseText = text.substr(0, hash);
    unsigned base = baseText == "2" ? 2 : baseText == "8" ? 8 : baseText == "16" ? 16 : 0;
    if (base == 0) {
        error = fmt::format("base '{}' of '{}' must be 2, 8 or 16", baseText, text);
        return false;
    }
    std::string_view digits = text.substr(hash + 1);
    value = 0;
    bool any = false;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        char c = digits[i];
        if (c == '_' && any) {
            continue;
        }
        int d = hexValue(c);
        if (d < 0 || static_cast<unsigned>(d) >= base) {
            error = fmt::format("digit '{}' is not valid in base {} literal '{}'", c, base, text);
            return false;
        }
        if (value > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(d)) / base) {
            error = fmt::format("integer literal '{}' does not fit in 64 bits", text);
            return false;
        }
        value = value * base + static_cast<unsigned>(d);
        any = true;
    }
    if (!any) {
        error = fmt::format("based literal '{}' has no digits", text);
        return false;
    }
    return true;
}

bool decodeReal(std::string_view text, double& value, std::string& error) {
    char buf[128];
    std::size_t n = 0;
    for (char c : text) {
        if (c == '_') {
            continue;
        }
        if (n + 1 >= sizeof buf) {
            error = fmt::format("real literal '{}' is too long", text);
            return false;
        }
        buf[n++] = c;
    }
    auto [end, ec] = std::from_chars(buf, buf + n, value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc{} && std::isinf(value))) {
        error = fmt::format("real literal '{}' is out of range", text);
        return false;
    }
    if (ec != std::errc{} || end != buf + n || n == 0) {
        error = fmt::format("malformed real literal '{}'", text);
        return false;
    }
    return true;
}

bool decodeString(std::string_view text, bool wide, std::string& value, std::string& error) {
    char quote = wide ? '"' : '\'';
    if (text.size() < 2 || text.front() != quote || text.back() != quote) {
        error = fmt::format("string literal {} is not enclosed in {} quotes", text, quote);
        return false;
    }
    std::string_view body = text.substr(1, text.size() - 2);
    value.clear();
    value.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c != '$') {
            value += c;
            continue;
        }
        if (i + 1 >= body.size()) {
            error = fmt::format("string {} ends with a lone '$'", text);
            return false;
        }
        char e = body[i + 1];
        switch (upper(e)) {
        case '$':
            value += '$';
            ++i;
            continue;
        case '\'':
            value += '\'';
            ++i;
            continue;
        case '"':
            value += '"';
            ++i;
            continue;
        case 'L':
        case 'N':
            value += '\n';
            ++i;
            continue;
        case 'P':
            value += '\f';
            ++i;
            continue;
        case 'R':
            value += '\r';
            ++i;
            continue;
        case 'T':
            value += '\t';
            ++i;
            continue;
        default: break;
        }
        std::size_t digits = wide ? 4 : 2;
        std::uint32_t code = 0;
        std::size_t k = 0;
        for (; k < digits && i + 1 + k < body.size(); ++k) {
            int d = hexValue(body[i + 1 + k]);
            if (d < 0) {
                break;
            }
            code = code * 16 + static_cast<std::uint32_t>(d);
        }
        if (k != digits) {
            std::string_view bad = body.substr(i, std::min<std::size_t>(digits + 1, body.size() - i));
            error = fmt::format("invalid escape '{}' in {}: use $$ $' $\" $L $N $P $R $T or ${}", bad, text,
                                wide ? "hhhh" : "hh");
            return false;
        }
        if (wide) {
            common::appendUtf8(value, code);
        } else {
            value += static_cast<char>(code);
        }
        i += digits;
    }
    return true;
}

bool decodeDuration(std::string_view body, std::int64_t& nanos, std::string& error) {
    std::size_t pos = 0;
    bool negative = false;
    if (pos < body.size() && (body[pos] == '-' || body[pos] == '+')) {
        negative = body[pos] == '-';
        ++pos;
    }
    Int128 total = 0;
    bool any = false;
    constexpr Int128 kLimit = static_cast<Int128>(std::numeric_limits<std::int64_t>::max()) + 1;
    while (pos < body.size()) {
        if (body[pos] == '_' && any) {
            ++pos;
            continue;
        }
        std::uint64_t whole = 0;
        bool overflow = false;
        if (!readDecimal(body, pos, whole, overflow)) {
            error = fmt::format("duration '{}' needs a number before each unit", body);
            return false;
        }
        std::uint64_t frac = 0;
        std::uint64_t fracScale = 1;
        if (pos < body.size() && body[pos] == '.') {
            ++pos;
            std::size_t start = pos;
            while (pos < body.size() && isDigit(body[pos])) {
                if (fracScale < 1'000'000'000'000'000'000ULL) { // digits beyond 1e-18 cannot matter
                    frac = frac * 10 + static_cast<std::uint64_t>(body[pos] - '0');
                    fracScale *= 10;
                }
                ++pos;
            }
            if (pos == start) {
                error = fmt::format("duration '{}' has no digits after '.'", body);
                return false;
            }
        }
        std::int64_t unit = 0;
        char u = pos < body.size() ? upper(body[pos]) : '\0';
        char u2 = pos + 1 < body.size() ? upper(body[pos + 1]) : '\0';
        if (u == 'D') {
            unit = kNsPerDay;
            pos += 1;
        } else if (u == 'H') {
            unit = 3600 * kNsPerSecond;
            pos += 1;
        } else if (u == 'M' && u2 == 'S') {
            unit = 1'000'000;
            pos += 2;
        } else if (u == 'M') {
            unit = 60 * kNsPerSecond;
            pos += 1;
        } else if (u == 'S') {
            unit = kNsPerSecond;
            pos += 1;
        } else if (u == 'U' && u2 == 'S') {
            unit = 1'000;
            pos += 2;
        } else if (u == 'N' && u2 == 'S') {
            unit = 1;
            pos += 2;
        } else {
            error = pos < body.size()
                        ? fmt::format("unknown time unit '{}' in '{}' (use d h m s ms us ns)", body.substr(pos), body)
                        : fmt::format("duration '{}' lacks a unit (d h m s ms us ns)", body);
            return false;
        }
        if (overflow || static_cast<Int128>(whole) > kLimit) {
            error = fmt::format("duration '{}' is out of range", body);
            return false;
        }
        total += static_cast<Int128>(whole) * unit + static_cast<Int128>(frac) * unit / fracScale;
        if (total > kLimit) {
            error = fmt::format("duration '{}' is out of range", body);
            return false;
        }
        any = true;
    }
    if (!any) {
        error = fmt::format("duration '{}' has no value", body);
        return false;
    }
    if (!negative && total == kLimit) {
        error = fmt::format("duration '{}' is out of range", body);
        return false;
    }
    nanos = negative ? static_cast<std::int64_t>(-total) : static_cast<std::int64_t>(total);
    return true;
}

bool decodeDate(std::string_view body, std::int64_t& nanos, std::string& error) {
    std::size_t pos = 0;
    std::int64_t days = 0;
    if (!parseDatePart(body, pos, days, error)) {
        return false;
    }
    if (pos != body.size()) {
        error = fmt::format("unexpected '{}' after date in '{}'", body.substr(pos), body);
        return false;
    }
    nanos = days * kNsPerDay;
    return true;
}

bool decodeTimeOfDay(std::string_view body, std::int64_t& nanos, std::string& error) {
    std::size_t pos = 0;
    return parseTimePart(body, pos, nanos, error);
}

bool decodeDateAndTime(std::string_view body, std::int64_t& nanos, std::string& error) {
    std::size_t pos = 0;
    std::int64_t days = 0;
    if (!parseDatePart(body, pos, days, error)) {
        return false;
    }
    if (pos >= body.size() || body[pos] != '-') {
        error = fmt::format("date and time '{}' is not of the form YYYY-MM-DD-HH:MM:SS", body);
        return false;
    }
    ++pos;
    std::int64_t tod = 0;
    if (!parseTimePart(body, pos, tod, error)) {
        return false;
    }
    Int128 total = static_cast<Int128>(days) * kNsPerDay + tod;
    if (total > std::numeric_limits<std::int64_t>::max()) {
        error = fmt::format("date and time '{}' is out of range", body);
        return false;
    }
    nanos = static_cast<std::int64_t>(total);
    return true;
}

// The one address grammar (bytecode/address.h), in the AST's form.
bool parseAddress(std::string_view text, ast::Address& address, std::string& error) {
    address = ast::Address{};
    bytecode::WrittenAddress w;
    if (!bytecode::parseWrittenAddress(text, w, error)) {
        return false;
    }
    static constexpr ast::AddressArea kArea[] = {ast::AddressArea::Input, ast::AddressArea::Output,
                                                 ast::AddressArea::Memory};
    static constexpr ast::AddressSize kSize[] = {ast::AddressSize::Bit, ast::AddressSize::Byte, ast::AddressSize::Word,
                                                 ast::AddressSize::DWord, ast::AddressSize::LWord};
    address.area = kArea[static_cast<std::size_t>(w.address.area)];
    address.size = w.sizeLetter ? kSize[static_cast<std::size_t>(w.address.width)] : ast::AddressSize::None;
    address.wildcard = w.wildcard;
    if (!w.wildcard) {
        address.indices.push_back(w.address.index);
        if (w.address.isBit()) {
            address.indices.push_back(w.address.bit);
        }
    }
    return true;
}

bool isElementaryTypeName(std::string_view name) {
    static constexpr std::string_view kNames[] = {
        "BOOL",   "SINT",    "INT",   "DINT",        "LINT",         "USINT", "UINT", "UDINT",         "ULINT",
        "BYTE",   "WORD",    "DWORD", "LWORD",       "REAL",         "LREAL", "TIME", "LTIME",         "DATE",
        "LDATE",  "TOD",     "LTOD",  "TIME_OF_DAY", "LTIME_OF_DAY", "DT",    "LDT",  "DATE_AND_TIME", "LDATE_AND_TIME",
        "STRING", "WSTRING", "CHAR",  "WCHAR",
    };
    if (name.size() > 14) {
        return false;
    }
    for (std::string_view n : kNames) {
        if (sameName(name, n)) {
            return true;
        }
    }
    return false;
}

} // namespace takt::compiler
