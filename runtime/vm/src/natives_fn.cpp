// Standard functions implemented in C++ (natives.def, kind Fn): strings with 1-based positions
// and truncation to the destination's capacity, BCD, integer EXPT and text conversions.
// Argument blocks are 8-byte slots (opcodes.def, CALL_NATIVE); every image access is checked.
#include "native_text.h"
#include "text_number.h"
#include "vm_internal.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

namespace takt::vm {

namespace {

using bytecode::Native;

std::int64_t intArg(const std::uint8_t* args, int slot) noexcept {
    return load<std::int64_t>(args + 8 * slot);
}
double realArg(const std::uint8_t* args, int slot) noexcept {
    return load<double>(args + 8 * slot);
}
void setInt(std::uint8_t* args, std::int64_t v) noexcept {
    store<std::int64_t>(args, v);
}

using text::setString;
using text::stringArg;

// Clamps an integer argument to [lo, hi].
std::size_t clampPos(std::int64_t v, std::size_t lo, std::size_t hi) noexcept {
    if (v < static_cast<std::int64_t>(lo)) {
        return lo;
    }
    if (static_cast<std::uint64_t>(v) > hi) {
        return hi;
    }
    return static_cast<std::size_t>(v);
}

#define TAKT_STRING_ARG(name, slot)                                                                                    \
    std::basic_string_view<C> name;                                                                                    \
    if (!stringArg<C>(ctx, args, slot, name))                                                                          \
        return Trap::NullReference;

template <typename C> Trap len(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(s, 1)
    setInt(args, static_cast<std::int64_t>(s.size()));
    return Trap::None;
}

template <typename C> Trap left(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(s, 1)
    return setString<C>(ctx, args, s.substr(0, clampPos(intArg(args, 2), 0, s.size())));
}

template <typename C> Trap right(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(s, 1)
    const std::size_t n = clampPos(intArg(args, 2), 0, s.size());
    return setString<C>(ctx, args, s.substr(s.size() - n));
}

// MID(IN, L, P): L characters from position P; a P outside 1..LEN gives ''.
template <typename C> Trap mid(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(s, 1)
    const std::int64_t p = intArg(args, 3);
    if (p < 1 || static_cast<std::uint64_t>(p) > s.size()) {
        return setString<C>(ctx, args, {});
    }
    const std::size_t from = static_cast<std::size_t>(p - 1);
    return setString<C>(ctx, args, s.substr(from, clampPos(intArg(args, 2), 0, s.size() - from)));
}

template <typename C> Trap concat(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(a, 1)
    TAKT_STRING_ARG(b, 2)
    return setString<C>(ctx, args, a, b);
}

// INSERT(IN1, IN2, P): IN2 after the P-th character of IN1 (P clamped to 0..LEN(IN1)).
template <typename C> Trap insert(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(a, 1)
    TAKT_STRING_ARG(b, 2)
    const std::size_t p = clampPos(intArg(args, 3), 0, a.size());
    return setString<C>(ctx, args, a.substr(0, p), b, a.substr(p));
}

// DELETE(IN, L, P): removes L characters from position P; a P outside 1..LEN leaves IN.
template <typename C> Trap del(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(s, 1)
    const std::int64_t p = intArg(args, 3);
    if (p < 1 || static_cast<std::uint64_t>(p) > s.size()) {
        return setString<C>(ctx, args, s);
    }
    const std::size_t from = static_cast<std::size_t>(p - 1);
    const std::size_t n = clampPos(intArg(args, 2), 0, s.size() - from);
    return setString<C>(ctx, args, s.substr(0, from), s.substr(from + n));
}

// REPLACE(IN1, IN2, L, P): L characters of IN1 from position P replaced by IN2 (P clamped to
// 1..LEN(IN1)+1).
template <typename C> Trap replace(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(a, 1)
    TAKT_STRING_ARG(b, 2)
    const std::size_t from = clampPos(intArg(args, 4), 1, a.size() + 1) - 1;
    const std::size_t n = clampPos(intArg(args, 3), 0, a.size() - from);
    return setString<C>(ctx, args, a.substr(0, from), b, a.substr(from + n));
}

template <typename C> Trap find(const NativeContext& ctx, std::uint8_t* args) noexcept {
    TAKT_STRING_ARG(a, 1)
    TAKT_STRING_ARG(b, 2)
    const std::size_t at = b.empty() ? std::basic_string_view<C>::npos : a.find(b);
    setInt(args, at == std::basic_string_view<C>::npos ? 0 : static_cast<std::int64_t>(at + 1));
    return Trap::None;
}

// STRING <-> WSTRING: Latin-1 bytes widen to the same code units; a code unit above 16#FF
// becomes '?' in a STRING.
Trap stringToWstring(const NativeContext& ctx, std::uint8_t* args) noexcept {
    using C = char;
    TAKT_STRING_ARG(s, 1)
    char16_t* dst = nullptr;
    std::uint32_t cap = 0;
    if (const Trap t = text::resultBuffer(ctx, args, dst, cap); t != Trap::None) {
        return t;
    }
    const std::size_t n = std::min<std::size_t>(s.size(), cap);
    for (std::size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<char16_t>(static_cast<unsigned char>(s[i]));
    }
    endString(dst, n, cap);
    return Trap::None;
}

Trap wstringToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    using C = char16_t;
    TAKT_STRING_ARG(s, 1)
    char* dst = nullptr;
    std::uint32_t cap = 0;
    if (const Trap t = text::resultBuffer(ctx, args, dst, cap); t != Trap::None) {
        return t;
    }
    const std::size_t n = std::min<std::size_t>(s.size(), cap);
    for (std::size_t i = 0; i < n; ++i) {
        dst[i] = s[i] <= 0xFF ? static_cast<char>(s[i]) : '?';
    }
    endString(dst, n, cap);
    return Trap::None;
}

Trap toBcd(const NativeContext&, std::uint8_t* args) noexcept {
    auto v = static_cast<std::uint64_t>(intArg(args, 1));
    std::uint64_t out = 0;
    for (unsigned shift = 0; v != 0 && shift < 64; shift += 4) {
        out |= (v % 10) << shift;
        v /= 10;
    }
    setInt(args, static_cast<std::int64_t>(out));
    return Trap::None;
}

Trap fromBcd(const NativeContext&, std::uint8_t* args) noexcept {
    auto v = static_cast<std::uint64_t>(intArg(args, 1));
    std::uint64_t out = 0;
    std::uint64_t scale = 1;
    for (; v != 0; v >>= 4) {
        const std::uint64_t digit = v & 0xF;
        if (digit > 9) {
            return Trap::InvalidArgument;
        }
        out += digit * scale;
        scale *= 10;
    }
    setInt(args, static_cast<std::int64_t>(out));
    return Trap::None;
}

// Integer power by squaring, wrapping like the other integer operators.
Trap exptInt(const NativeContext&, std::uint8_t* args) noexcept {
    const std::int64_t base = intArg(args, 1);
    std::int64_t exp = intArg(args, 2);
    if (exp < 0) {
        if (base == 0) {
            return Trap::DivByZero;
        }
        setInt(args, base == 1 ? 1 : base == -1 ? ((-exp) % 2 == 0 ? 1 : -1) : 0);
        return Trap::None;
    }
    std::uint64_t result = 1;
    auto b = static_cast<std::uint64_t>(base);
    while (exp > 0) {
        if ((exp & 1) != 0) {
            result *= b;
        }
        b *= b;
        exp >>= 1;
    }
    setInt(args, static_cast<std::int64_t>(result));
    return Trap::None;
}

Trap intToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, intArg(args, 1));
    return setString(ctx, args, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

Trap uintToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::uint64_t>(intArg(args, 1)));
    return setString(ctx, args, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

Trap realToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, realArg(args, 1));
    return setString(ctx, args, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

Trap real32ToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, load<float>(args + 8));
    return setString(ctx, args, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

Trap boolToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    return setString(ctx, args, (intArg(args, 1) & 0xFF) != 0 ? "TRUE" : "FALSE");
}

// T#1d2h3m4s5ms6us7ns with the zero parts left out; T#0s for zero.
Trap timeToString(const NativeContext& ctx, std::uint8_t* args) noexcept {
    const std::int64_t t = intArg(args, 1);
    std::uint64_t v = t < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
    char buf[96];
    char* p = buf;
    *p++ = 'T';
    *p++ = '#';
    if (t < 0) {
        *p++ = '-';
    }
    struct Unit {
        std::uint64_t ns;
        const char* suffix;
    };
    constexpr Unit kUnits[] = {{86'400'000'000'000ull, "d"},
                               {3'600'000'000'000ull, "h"},
                               {60'000'000'000ull, "m"},
                               {1'000'000'000ull, "s"},
                               {1'000'000ull, "ms"},
                               {1'000ull, "us"},
                               {1ull, "ns"}};
    if (v == 0) {
        *p++ = '0';
        *p++ = 's';
    }
    for (const Unit& u : kUnits) {
        const std::uint64_t n = v / u.ns;
        v %= u.ns;
        if (n != 0) {
            p = std::to_chars(p, buf + sizeof buf, n).ptr;
            for (const char* s = u.suffix; *s != '\0'; ++s) {
                *p++ = *s;
            }
        }
    }
    return setString(ctx, args, std::string_view(buf, static_cast<std::size_t>(p - buf)));
}

// The text read as a number of the type in slot 2 (text_number.h); not a number of it gives 0.
Trap stringToInt(const NativeContext& ctx, std::uint8_t* args) noexcept {
    using C = char;
    TAKT_STRING_ARG(s, 1)
    setInt(args, textToInt(s, static_cast<bytecode::TextNumber>(static_cast<std::uint32_t>(intArg(args, 2)))));
    return Trap::None;
}

Trap stringToReal(const NativeContext& ctx, std::uint8_t* args) noexcept {
    using C = char;
    TAKT_STRING_ARG(s, 1)
    store<double>(args, textToReal(s, static_cast<bytecode::TextNumber>(static_cast<std::uint32_t>(intArg(args, 2)))));
    return Trap::None;
}

#undef TAKT_STRING_ARG

// The cycle's start time, the one the timers see: reading it twice in a cycle gives one value.
Trap plcTime(const NativeContext& ctx, std::uint8_t* args) noexcept {
    setInt(args, ctx.nowNs);
    return Trap::None;
}

// The wall clock at the cycle's start (NOW_DT, NOW_LDT): one value for the whole cycle.
Trap nowDt(const NativeContext& ctx, std::uint8_t* args) noexcept {
    setInt(args, ctx.wallNs);
    return Trap::None;
}

} // namespace

NativeFn nativeFn(Native n) noexcept {
    switch (n) {
    case Native::Len: return len<char>;
    case Native::Left: return left<char>;
    case Native::Right: return right<char>;
    case Native::Mid: return mid<char>;
    case Native::Concat: return concat<char>;
    case Native::Insert: return insert<char>;
    case Native::Delete: return del<char>;
    case Native::Replace: return replace<char>;
    case Native::Find: return find<char>;
    case Native::WLen: return len<char16_t>;
    case Native::WLeft: return left<char16_t>;
    case Native::WRight: return right<char16_t>;
    case Native::WMid: return mid<char16_t>;
    case Native::WConcat: return concat<char16_t>;
    case Native::WInsert: return insert<char16_t>;
    case Native::WDelete: return del<char16_t>;
    case Native::WReplace: return replace<char16_t>;
    case Native::WFind: return find<char16_t>;
    case Native::StringToWstring: return stringToWstring;
    case Native::WstringToString: return wstringToString;
    case Native::ToBcd: return toBcd;
    case Native::FromBcd: return fromBcd;
    case Native::ExptInt: return exptInt;
    case Native::IntToString: return intToString;
    case Native::UintToString: return uintToString;
    case Native::RealToString: return realToString;
    case Native::Real32ToString: return real32ToString;
    case Native::BoolToString: return boolToString;
    case Native::TimeToString: return timeToString;
    case Native::StringToInt: return stringToInt;
    case Native::StringToReal: return stringToReal;
    case Native::PlcTime: return plcTime;
    case Native::NowDt: return nowDt;
    default: return nativeDateFn(n);
    }
}

} // namespace takt::vm
