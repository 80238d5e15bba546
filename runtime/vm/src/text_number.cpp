// Text to number (text_number.h). The literal forms are the compiler's (lexer.cpp,
// literals.cpp): decimal digits with single '_' between them and an optional sign, 2#/8#/16#
// based integers without a sign, REAL digits with a fraction and/or an exponent, TRUE/FALSE for
// BOOL, and an optional prefix naming the target type (INT#-5). A text that is not such a
// literal, or whose value the target type cannot hold, gives 0: like the date and time texts, a
// conversion never yields a value the text did not denote (no wrap, no clamp).
#include "text_number.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "takt/common/text.h"

namespace takt::vm {

namespace {

using bytecode::TextNumber;

struct NumberType {
    std::string_view name;
    unsigned bits;
    bool isSigned;
};

constexpr NumberType kTypes[bytecode::kTextNumberCount] = {
    {"BOOL", 1, false},  {"SINT", 8, true},    {"INT", 16, true},    {"DINT", 32, true},   {"LINT", 64, true},
    {"USINT", 8, false}, {"UINT", 16, false},  {"UDINT", 32, false}, {"ULINT", 64, false}, {"BYTE", 8, false},
    {"WORD", 16, false}, {"DWORD", 32, false}, {"LWORD", 64, false}, {"REAL", 32, true},   {"LREAL", 64, true},
};

// What a conversion skips around the number (not \v or \f, which no PLC text carries).
constexpr std::string_view kBlank = " \t\r\n";

char upper(char c) noexcept {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

bool equalsNoCase(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (upper(a[i]) != upper(b[i])) {
            return false;
        }
    }
    return true;
}

// The text without "<name>#" in front (any case), when it has it.
std::string_view dropPrefix(std::string_view s, std::string_view name) noexcept {
    if (s.size() > name.size() && s[name.size()] == '#' && equalsNoCase(s.substr(0, name.size()), name)) {
        return s.substr(name.size() + 1);
    }
    return s;
}

int digitValue(char c) noexcept {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    const char u = upper(c);
    return u >= 'A' && u <= 'F' ? u - 'A' + 10 : 99;
}

// Digits of `base` from s[pos], a single '_' allowed between two digits; false when there is
// no digit or an '_' is not between digits. `overflow` when the value exceeds 64 bits.
bool readDigits(std::string_view s, std::size_t& pos, int base, std::uint64_t& value, bool& overflow) noexcept {
    value = 0;
    bool any = false;
    while (pos < s.size()) {
        if (s[pos] == '_') {
            if (!any || pos + 1 >= s.size() || digitValue(s[pos + 1]) >= base) {
                return false;
            }
            ++pos;
            continue;
        }
        const int d = digitValue(s[pos]);
        if (d >= base) {
            break;
        }
        const auto ud = static_cast<std::uint64_t>(d);
        if (value > (std::numeric_limits<std::uint64_t>::max() - ud) / static_cast<std::uint64_t>(base)) {
            overflow = true;
        } else {
            value = value * static_cast<std::uint64_t>(base) + ud;
        }
        any = true;
        ++pos;
    }
    return any;
}

// 2#…, 8#…, 16#… (no sign), the whole text.
bool readBased(std::string_view s, std::uint64_t& value) noexcept {
    const std::size_t hash = s.find('#');
    const std::string_view base = s.substr(0, hash);
    const int radix = base == "2" ? 2 : base == "8" ? 8 : base == "16" ? 16 : 0;
    if (hash == std::string_view::npos || radix == 0) {
        return false;
    }
    std::size_t pos = hash + 1;
    bool overflow = false;
    return readDigits(s, pos, radix, value, overflow) && pos == s.size() && !overflow;
}

// A signed decimal or a based integer, the whole text.
bool readInteger(std::string_view s, bool& negative, std::uint64_t& magnitude) noexcept {
    negative = false;
    if (s.find('#') != std::string_view::npos) {
        return readBased(s, magnitude);
    }
    std::size_t pos = 0;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        negative = s.front() == '-';
        pos = 1;
    }
    bool overflow = false;
    return readDigits(s, pos, 10, magnitude, overflow) && pos == s.size() && !overflow;
}

// Copies decimal digits (dropping the '_' between them) to buf[n]; false when malformed or
// longer than the buffer.
template <std::size_t N>
bool copyDigits(std::string_view s, std::size_t& pos, char (&buf)[N], std::size_t& n) noexcept {
    const std::size_t start = pos;
    std::uint64_t ignored = 0;
    bool overflow = false;
    if (!readDigits(s, pos, 10, ignored, overflow)) {
        return false;
    }
    for (std::size_t i = start; i < pos; ++i) {
        if (s[i] != '_') {
            if (n >= N) {
                return false;
            }
            buf[n++] = s[i];
        }
    }
    return true;
}

// [sign] digits [. digits] [E [sign] digits] into buf without the '_'; false when malformed.
template <std::size_t N> bool realText(std::string_view s, char (&buf)[N], std::size_t& n) noexcept {
    std::size_t pos = 0;
    n = 0;
    auto sign = [&] {
        if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
            if (s[pos] == '-') {
                buf[n++] = '-';
            }
            ++pos;
        }
    };
    sign();
    if (!copyDigits(s, pos, buf, n)) {
        return false;
    }
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        if (n >= N) {
            return false;
        }
        buf[n++] = '.';
        if (!copyDigits(s, pos, buf, n)) {
            return false;
        }
    }
    if (pos < s.size() && (s[pos] == 'E' || s[pos] == 'e')) {
        ++pos;
        if (n + 2 >= N) {
            return false;
        }
        buf[n++] = 'e';
        sign();
        if (!copyDigits(s, pos, buf, n)) {
            return false;
        }
    }
    return pos == s.size();
}

template <typename F> double parseReal(std::string_view s) noexcept {
    std::uint64_t based = 0;
    if (s.find('#') != std::string_view::npos) {
        return readBased(s, based) ? static_cast<double>(static_cast<F>(based)) : 0.0;
    }
    char buf[128];
    std::size_t n = 0;
    F v = 0;
    if (!realText(s, buf, n)) {
        return 0.0;
    }
    const auto r = std::from_chars(buf, buf + n, v);
    if (r.ec != std::errc{} || r.ptr != buf + n || !std::isfinite(v)) {
        return 0.0; // out of range (or too small to be told from 0) as well
    }
    return static_cast<double>(v);
}

} // namespace

std::int64_t textToInt(std::string_view text, TextNumber type) noexcept {
    const auto index = static_cast<std::uint32_t>(type);
    if (index >= bytecode::kTextNumberCount || type == TextNumber::Real || type == TextNumber::Lreal) {
        return 0;
    }
    const NumberType& t = kTypes[index];
    const std::string_view s = dropPrefix(common::trim(text, kBlank), t.name);
    if (type == TextNumber::Bool && (equalsNoCase(s, "TRUE") || equalsNoCase(s, "FALSE"))) {
        return equalsNoCase(s, "TRUE") ? 1 : 0;
    }
    bool negative = false;
    std::uint64_t magnitude = 0;
    if (!readInteger(s, negative, magnitude)) {
        return 0;
    }
    if (!t.isSigned) {
        const std::uint64_t max = t.bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << t.bits) - 1;
        return (negative && magnitude != 0) || magnitude > max ? 0 : static_cast<std::int64_t>(magnitude);
    }
    const std::uint64_t limit = std::uint64_t{1} << (t.bits - 1); // |min|; max is limit - 1
    if (magnitude > (negative ? limit : limit - 1)) {
        return 0;
    }
    return negative ? static_cast<std::int64_t>(std::uint64_t{0} - magnitude) : static_cast<std::int64_t>(magnitude);
}

double textToReal(std::string_view text, TextNumber type) noexcept {
    if (type != TextNumber::Real && type != TextNumber::Lreal) {
        return 0.0;
    }
    const std::string_view s = dropPrefix(common::trim(text, kBlank), kTypes[static_cast<std::uint32_t>(type)].name);
    return type == TextNumber::Real ? parseReal<float>(s) : parseReal<double>(s);
}

} // namespace takt::vm
