// Dates and times as text and as fields (natives.def, kind Fn): DATE, TOD, DT (and their
// L-variants, the same int64 nanoseconds) to and from their literal forms, STRING_TO_TIME,
// CONCAT_DATE/TOD/DT, SPLIT_DATE/TOD/DT and DAY_OF_WEEK. The calendar is the proleptic Gregorian
// one (H. Hinnant's civil algorithms); text is parsed the way the compiler reads literals, and
// a text that is not a literal of the kind gives 0, like STRING_TO_INT. Nothing allocates.
#include "native_text.h"
#include "takt/bytecode/calendar.h"
#include "vm_internal.h"

#include <charconv>
#include <initializer_list>
#include <limits>
#include <string_view>

namespace takt::vm {

namespace {

using bytecode::Native;

// 128-bit accumulation keeps the overflow checks of nanosecond sums simple.
__extension__ typedef __int128 Int128;

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kNsPerDay = 86'400 * kNsPerSecond;
// The whole years whose every instant fits int64 nanoseconds (the literal range of the compiler).
constexpr std::int64_t kMinYear = bytecode::kFirstYear;
constexpr std::int64_t kMaxYear = bytecode::kLastYear;

std::int64_t intArg(const std::uint8_t* args, int slot) noexcept {
    return load<std::int64_t>(args + 8 * slot);
}
void setInt(std::uint8_t* args, int slot, std::int64_t v) noexcept {
    store<std::int64_t>(args + 8 * slot, v);
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) noexcept {
    const std::int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
std::int64_t floorMod(std::int64_t a, std::int64_t b) noexcept {
    return a - floorDiv(a, b) * b;
}

using bytecode::civilFromDays;
using bytecode::daysFromCivil;
using bytecode::daysInMonth;
using Civil = bytecode::CivilDate;

bool validDate(std::int64_t y, std::int64_t m, std::int64_t d) noexcept {
    return y >= kMinYear && y <= kMaxYear && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

// Nanoseconds since midnight of hour:minute:second plus a fraction in nanoseconds.
bool validTime(std::int64_t h, std::int64_t mi, std::int64_t s) noexcept {
    return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59;
}

// ---- text out ------------------------------------------------------------------------------

// A fixed buffer the formatters append to (the longest text, an LDT with a fraction, is 33).
class TextOut {
public:
    void put(std::string_view s) noexcept {
        for (char c : s) {
            if (n_ < sizeof buf_) {
                buf_[n_++] = c;
            }
        }
    }
    // v in decimal, zero-padded to `width` digits.
    void num(std::uint64_t v, int width) noexcept {
        char digits[24];
        const auto r = std::to_chars(digits, digits + sizeof digits, v);
        for (auto len = static_cast<int>(r.ptr - digits); len < width; ++len) {
            put("0");
        }
        put(std::string_view(digits, static_cast<std::size_t>(r.ptr - digits)));
    }
    void date(std::int64_t days) noexcept {
        const Civil c = civilFromDays(days);
        num(static_cast<std::uint64_t>(c.year), 4);
        put("-");
        num(static_cast<std::uint64_t>(c.month), 2);
        put("-");
        num(static_cast<std::uint64_t>(c.day), 2);
    }
    // hh:mm:ss, then .fraction with its trailing zeros left out when not 0.
    void time(std::int64_t nanos) noexcept {
        const auto ns = static_cast<std::uint64_t>(nanos);
        const std::uint64_t secs = ns / kNsPerSecond;
        num(secs / 3600, 2);
        put(":");
        num(secs / 60 % 60, 2);
        put(":");
        num(secs % 60, 2);
        std::uint64_t frac = ns % kNsPerSecond;
        if (frac != 0) {
            int width = 9;
            while (frac % 10 == 0) {
                frac /= 10;
                --width;
            }
            put(".");
            num(frac, width);
        }
    }
    [[nodiscard]] std::string_view view() const noexcept { return {buf_, n_}; }

private:
    char buf_[48];
    std::size_t n_ = 0;
};

Trap dateToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TextOut t;
    t.put(intArg(args, 2) != 0 ? "LDATE#" : "D#");
    t.date(floorDiv(intArg(args, 1), kNsPerDay));
    return text::setString(ctx, args, t.view());
}

// A TOD outside one day (TOD arithmetic does not wrap) is shown modulo 24 hours.
Trap todToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TextOut t;
    t.put(intArg(args, 2) != 0 ? "LTOD#" : "TOD#");
    t.time(floorMod(intArg(args, 1), kNsPerDay));
    return text::setString(ctx, args, t.view());
}

Trap dtToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    const std::int64_t v = intArg(args, 1);
    TextOut t;
    t.put(intArg(args, 2) != 0 ? "LDT#" : "DT#");
    t.date(floorDiv(v, kNsPerDay));
    t.put("-");
    t.time(floorMod(v, kNsPerDay));
    return text::setString(ctx, args, t.view());
}

// ---- text in -------------------------------------------------------------------------------

char upper(char c) noexcept {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}
bool isDigit(char c) noexcept {
    return c >= '0' && c <= '9';
}
bool equalsUpper(std::string_view a, std::string_view upperB) noexcept {
    if (a.size() != upperB.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (upper(a[i]) != upperB[i]) {
            return false;
        }
    }
    return true;
}

// The literal body: blanks around the text dropped, and the prefix before '#' (when there is
// one) one of `prefixes`; false when the prefix is another one.
bool literalBody(std::string_view s, std::initializer_list<std::string_view> prefixes,
                 std::string_view& body) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    const std::size_t hash = s.find('#');
    if (hash == std::string_view::npos) {
        body = s;
        return true;
    }
    for (std::string_view p : prefixes) {
        if (equalsUpper(s.substr(0, hash), p)) {
            body = s.substr(hash + 1);
            return true;
        }
    }
    return false;
}

// Reads the digits of a date or time field (at most 10); false when there are none.
bool field(std::string_view s, std::size_t& pos, std::int64_t& value) noexcept {
    const std::size_t start = pos;
    value = 0;
    while (pos < s.size() && isDigit(s[pos]) && pos - start < 10) {
        value = value * 10 + (s[pos] - '0');
        ++pos;
    }
    return pos > start;
}

bool expect(std::string_view s, std::size_t& pos, char c) noexcept {
    if (pos < s.size() && s[pos] == c) {
        ++pos;
        return true;
    }
    return false;
}

// YYYY-MM-DD at pos: days since 1970-01-01.
bool parseDate(std::string_view s, std::size_t& pos, std::int64_t& days) noexcept {
    std::int64_t y = 0;
    std::int64_t m = 0;
    std::int64_t d = 0;
    if (!field(s, pos, y) || !expect(s, pos, '-') || !field(s, pos, m) || !expect(s, pos, '-') || !field(s, pos, d) ||
        !validDate(y, m, d)) {
        return false;
    }
    days = daysFromCivil(y, m, d);
    return true;
}

// HH:MM[:SS[.fraction]] from pos to the end: nanoseconds since midnight.
bool parseTime(std::string_view s, std::size_t pos, std::int64_t& nanos) noexcept {
    std::int64_t h = 0;
    std::int64_t mi = 0;
    std::int64_t sec = 0;
    std::int64_t frac = 0;
    if (!field(s, pos, h) || !expect(s, pos, ':') || !field(s, pos, mi)) {
        return false;
    }
    if (expect(s, pos, ':')) {
        if (!field(s, pos, sec)) {
            return false;
        }
        if (expect(s, pos, '.')) {
            std::int64_t scale = kNsPerSecond;
            const std::size_t start = pos;
            for (; pos < s.size() && isDigit(s[pos]); ++pos) {
                scale /= 10; // digits below a nanosecond add nothing
                frac += (s[pos] - '0') * scale;
            }
            if (pos == start) {
                return false;
            }
        }
    }
    if (pos != s.size() || !validTime(h, mi, sec)) {
        return false;
    }
    nanos = ((h * 60 + mi) * 60 + sec) * kNsPerSecond + frac;
    return true;
}

Trap stringToDate(const NativeContext& ctx, std::uint8_t* args) noexcept {
    std::string_view s;
    std::string_view body;
    std::size_t pos = 0;
    std::int64_t days = 0;
    if (!text::stringArg<char>(ctx, args, 1, s)) {
        return Trap::NullReference;
    }
    const bool ok =
        literalBody(s, {"D", "DATE", "LD", "LDATE"}, body) && parseDate(body, pos, days) && pos == body.size();
    setInt(args, 0, ok ? days * kNsPerDay : 0);
    return Trap::None;
}

Trap stringToTod(const NativeContext& ctx, std::uint8_t* args) noexcept {
    std::string_view s;
    std::string_view body;
    std::int64_t nanos = 0;
    if (!text::stringArg<char>(ctx, args, 1, s)) {
        return Trap::NullReference;
    }
    const bool ok = literalBody(s, {"TOD", "TIME_OF_DAY", "LTOD", "LTIME_OF_DAY"}, body) && parseTime(body, 0, nanos);
    setInt(args, 0, ok ? nanos : 0);
    return Trap::None;
}

Trap stringToDt(const NativeContext& ctx, std::uint8_t* args) noexcept {
    std::string_view s;
    std::string_view body;
    std::size_t pos = 0;
    std::int64_t days = 0;
    std::int64_t nanos = 0;
    if (!text::stringArg<char>(ctx, args, 1, s)) {
        return Trap::NullReference;
    }
    const bool ok = literalBody(s, {"DT", "DATE_AND_TIME", "LDT", "LDATE_AND_TIME"}, body) &&
                    parseDate(body, pos, days) && expect(body, pos, '-') && parseTime(body, pos, nanos);
    setInt(args, 0, ok ? days * kNsPerDay + nanos : 0);
    return Trap::None;
}

// A duration body ("1h2m3s", "-1.5s", "1d_2h"; units d h m s ms us ns, case-insensitive):
// nanoseconds, false when malformed or outside the int64 range.
bool parseDuration(std::string_view s, std::int64_t& nanos) noexcept {
    std::size_t pos = 0;
    bool negative = false;
    if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
        negative = s[pos] == '-';
        ++pos;
    }
    constexpr Int128 kLimit = static_cast<Int128>(std::numeric_limits<std::int64_t>::max()) + 1;
    Int128 total = 0;
    bool any = false;
    while (pos < s.size()) {
        if (s[pos] == '_' && any) {
            ++pos;
            continue;
        }
        const std::size_t start = pos;
        Int128 whole = 0;
        for (; pos < s.size() && (isDigit(s[pos]) || (s[pos] == '_' && pos > start)); ++pos) {
            if (s[pos] != '_') {
                whole = whole * 10 + (s[pos] - '0');
                if (whole > kLimit) {
                    return false;
                }
            }
        }
        if (pos == start) {
            return false;
        }
        std::int64_t frac = 0;
        std::int64_t fracScale = 1;
        if (expect(s, pos, '.')) {
            const std::size_t fracStart = pos;
            for (; pos < s.size() && isDigit(s[pos]); ++pos) {
                if (fracScale < 1'000'000'000'000'000'000LL) { // digits beyond 1e-18 cannot matter
                    frac = frac * 10 + (s[pos] - '0');
                    fracScale *= 10;
                }
            }
            if (pos == fracStart) {
                return false;
            }
        }
        const char u = pos < s.size() ? upper(s[pos]) : '\0';
        const char u2 = pos + 1 < s.size() ? upper(s[pos + 1]) : '\0';
        std::int64_t unit = 0;
        std::size_t unitLength = 1;
        if (u == 'D') {
            unit = kNsPerDay;
        } else if (u == 'H') {
            unit = 3600 * kNsPerSecond;
        } else if (u == 'M' && u2 == 'S') {
            unit = kNsPerMs;
            unitLength = 2;
        } else if (u == 'M') {
            unit = 60 * kNsPerSecond;
        } else if (u == 'S') {
            unit = kNsPerSecond;
        } else if (u == 'U' && u2 == 'S') {
            unit = 1'000;
            unitLength = 2;
        } else if (u == 'N' && u2 == 'S') {
            unit = 1;
            unitLength = 2;
        } else {
            return false;
        }
        pos += unitLength;
        total += whole * unit + static_cast<Int128>(frac) * unit / fracScale;
        if (total > kLimit) {
            return false;
        }
        any = true;
    }
    if (!any || (!negative && total == kLimit)) {
        return false;
    }
    nanos = negative ? static_cast<std::int64_t>(-total) : static_cast<std::int64_t>(total);
    return true;
}

Trap stringToTime(const NativeContext& ctx, std::uint8_t* args) noexcept {
    std::string_view s;
    std::string_view body;
    std::int64_t nanos = 0;
    if (!text::stringArg<char>(ctx, args, 1, s)) {
        return Trap::NullReference;
    }
    const bool ok = literalBody(s, {"T", "TIME", "LT", "LTIME"}, body) && parseDuration(body, nanos);
    setInt(args, 0, ok ? nanos : 0);
    return Trap::None;
}

// ---- fields --------------------------------------------------------------------------------

// hour, minute, second and millisecond from slots `first`..first+3: nanoseconds since midnight.
bool timeFields(const std::uint8_t* args, int first, std::int64_t& nanos) noexcept {
    const std::int64_t h = intArg(args, first);
    const std::int64_t mi = intArg(args, first + 1);
    const std::int64_t s = intArg(args, first + 2);
    const std::int64_t ms = intArg(args, first + 3);
    if (!validTime(h, mi, s) || ms < 0 || ms > 999) {
        return false;
    }
    nanos = ((h * 60 + mi) * 60 + s) * kNsPerSecond + ms * kNsPerMs;
    return true;
}

Trap concatDate(const NativeContext&, std::uint8_t* args) noexcept {
    const std::int64_t y = intArg(args, 1);
    const std::int64_t m = intArg(args, 2);
    const std::int64_t d = intArg(args, 3);
    if (!validDate(y, m, d)) {
        return Trap::InvalidArgument;
    }
    setInt(args, 0, daysFromCivil(y, m, d) * kNsPerDay);
    return Trap::None;
}

Trap concatTod(const NativeContext&, std::uint8_t* args) noexcept {
    std::int64_t nanos = 0;
    if (!timeFields(args, 1, nanos)) {
        return Trap::InvalidArgument;
    }
    setInt(args, 0, nanos);
    return Trap::None;
}

Trap concatDt(const NativeContext&, std::uint8_t* args) noexcept {
    const std::int64_t y = intArg(args, 1);
    const std::int64_t m = intArg(args, 2);
    const std::int64_t d = intArg(args, 3);
    std::int64_t nanos = 0;
    if (!validDate(y, m, d) || !timeFields(args, 4, nanos)) {
        return Trap::InvalidArgument;
    }
    setInt(args, 0, daysFromCivil(y, m, d) * kNsPerDay + nanos);
    return Trap::None;
}

void splitDays(std::uint8_t* args, int first, std::int64_t days) noexcept {
    const Civil c = civilFromDays(days);
    setInt(args, first, c.year);
    setInt(args, first + 1, c.month);
    setInt(args, first + 2, c.day);
}

void splitTime(std::uint8_t* args, int first, std::int64_t nanos) noexcept {
    const std::int64_t ms = nanos / kNsPerMs;
    setInt(args, first, ms / 3'600'000);
    setInt(args, first + 1, ms / 60'000 % 60);
    setInt(args, first + 2, ms / 1000 % 60);
    setInt(args, first + 3, ms % 1000);
}

Trap splitDate(const NativeContext&, std::uint8_t* args) noexcept {
    splitDays(args, 2, floorDiv(intArg(args, 1), kNsPerDay));
    return Trap::None;
}

// A TOD outside one day is split modulo 24 hours, as it is shown as text.
Trap splitTod(const NativeContext&, std::uint8_t* args) noexcept {
    splitTime(args, 2, floorMod(intArg(args, 1), kNsPerDay));
    return Trap::None;
}

Trap splitDt(const NativeContext&, std::uint8_t* args) noexcept {
    const std::int64_t v = intArg(args, 1);
    splitDays(args, 2, floorDiv(v, kNsPerDay));
    splitTime(args, 5, floorMod(v, kNsPerDay));
    return Trap::None;
}

// 1970-01-01 was a Thursday (4).
Trap dayOfWeek(const NativeContext&, std::uint8_t* args) noexcept {
    setInt(args, 0, floorMod(floorDiv(intArg(args, 1), kNsPerDay) + 4, 7));
    return Trap::None;
}

} // namespace

NativeFn nativeDateFn(Native n) noexcept {
    switch (n) {
    case Native::DateToString: return dateToString;
    case Native::TodToString: return todToString;
    case Native::DtToString: return dtToString;
    case Native::StringToDate: return stringToDate;
    case Native::StringToTod: return stringToTod;
    case Native::StringToDt: return stringToDt;
    case Native::StringToTime: return stringToTime;
    case Native::ConcatDate: return concatDate;
    case Native::ConcatTod: return concatTod;
    case Native::ConcatDt: return concatDt;
    case Native::SplitDate: return splitDate;
    case Native::SplitTod: return splitTod;
    case Native::SplitDt: return splitDt;
    case Native::DayOfWeek: return dayOfWeek;
    default: return nullptr;
    }
}

} // namespace takt::vm
