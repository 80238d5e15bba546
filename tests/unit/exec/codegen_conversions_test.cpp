// Compiled conversions run in the VM (docs/language-notes.md, "Conversions"): REAL/LREAL to
// every integer and bit-string type rounds half to even (TRUNC truncates) and then saturates to
// the target's range, NaN giving 0, through every spelling (S_TO_T, TO_T, TRUNC_T, S_TRUNC_T)
// and for constant arguments; text to number reads the whole text as a literal of the target
// type or gives 0; TIME counts milliseconds to and from every integer type; MUX with K out of
// range traps MuxSelector.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "st_runner.h"
#include "takt/vm/vm.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

struct IntType {
    const char* name;
    unsigned bits;
    bool isSigned;
    bool hasTrunc; // TRUNC_<T> exists for the integer types, not for the bit strings
};

constexpr IntType kTargets[] = {
    {"SINT", 8, true, true},   {"INT", 16, true, true},    {"DINT", 32, true, true},    {"LINT", 64, true, true},
    {"USINT", 8, false, true}, {"UINT", 16, false, true},  {"UDINT", 32, false, true},  {"ULINT", 64, false, true},
    {"BYTE", 8, false, false}, {"WORD", 16, false, false}, {"DWORD", 32, false, false}, {"LWORD", 64, false, false},
};

std::uint64_t mask(const IntType& t, std::uint64_t v) {
    return t.bits == 64 ? v : v & ((std::uint64_t{1} << t.bits) - 1);
}

// The rule: NaN gives 0; otherwise rounded half to even (or truncated), then clamped to the
// type's range. The result as the type's bit pattern.
std::uint64_t expected(const IntType& t, double x, bool trunc) {
    if (std::isnan(x)) {
        return 0;
    }
    const double r = trunc ? std::trunc(x) : std::nearbyint(x);
    const double limit = std::ldexp(1.0, static_cast<int>(t.isSigned ? t.bits - 1 : t.bits)); // max + 1
    const double lo = t.isSigned ? -limit : 0.0;
    if (r >= limit) {
        return mask(t, t.isSigned ? (std::uint64_t{1} << (t.bits - 1)) - 1 : ~std::uint64_t{0});
    }
    if (r <= lo) {
        return mask(t, t.isSigned ? std::uint64_t{1} << (t.bits - 1) : 0);
    }
    return mask(t,
                t.isSigned ? static_cast<std::uint64_t>(static_cast<std::int64_t>(r)) : static_cast<std::uint64_t>(r));
}

template <typename F> std::vector<double> probes(const IntType& t) {
    const double limit = std::ldexp(1.0, static_cast<int>(t.isSigned ? t.bits - 1 : t.bits));
    const double lo = t.isSigned ? -limit : 0.0;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> in = {lo,    lo + 0.5,  lo - 0.5, lo - 1.0, limit - 1.0, limit - 0.5, limit - 0.6,
                              limit, limit + 1, 2.5,      -2.5,     3.5,         -0.4,        -0.6,
                              0.7,   1.0e30,    -1.0e30,  inf,      -inf,        std::nan("")};
    in.push_back(static_cast<double>(std::nextafter(static_cast<F>(limit), F{0}))); // the largest value below max + 1
    std::vector<double> out;
    for (double v : in) {
        out.push_back(static_cast<double>(static_cast<F>(v))); // as the REAL/LREAL variable holds it
    }
    return out;
}

template <typename F> void checkRealToInt(const char* real, const IntType& t) {
    const std::vector<double> xs = probes<F>(t);
    std::string decl;
    std::string body;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const std::string k = std::to_string(i);
        decl += "x" + k + " : " + real + "; a" + k + ", o" + k + ", t" + k + ", u" + k + " : " + t.name + ";\n";
        body += "a" + k + " := " + real + "_TO_" + t.name + "(x" + k + ");\n";
        body += "o" + k + " := TO_" + t.name + "(x" + k + ");\n";
        if (t.hasTrunc) {
            body += "t" + k + " := " + real + "_TRUNC_" + t.name + "(x" + k + ");\n";
            body += "u" + k + " := TRUNC_" + t.name + "(x" + k + ");\n";
        }
    }
    Runner r("PROGRAM Main\nVAR\n" + decl + "END_VAR\n" + body + "END_PROGRAM\n");
    ASSERT_TRUE(r.ok) << r.errors();
    for (std::size_t i = 0; i < xs.size(); ++i) {
        r.set<F>("Main.x" + std::to_string(i), static_cast<F>(xs[i]));
    }
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    auto read = [&](const std::string& name) -> std::uint64_t {
        switch (t.bits) {
        case 8: return r.get<std::uint8_t>("Main." + name);
        case 16: return r.get<std::uint16_t>("Main." + name);
        case 32: return r.get<std::uint32_t>("Main." + name);
        default: return r.get<std::uint64_t>("Main." + name);
        }
    };
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const std::string k = std::to_string(i);
        const std::string what = std::string(real) + " " + std::to_string(xs[i]) + " -> " + t.name;
        EXPECT_EQ(read("a" + k), expected(t, xs[i], false)) << what;
        EXPECT_EQ(read("o" + k), expected(t, xs[i], false)) << what << " (TO_)";
        if (t.hasTrunc) {
            EXPECT_EQ(read("t" + k), expected(t, xs[i], true)) << what << " (TRUNC)";
            EXPECT_EQ(read("u" + k), expected(t, xs[i], true)) << what << " (TRUNC_)";
        }
    }
}

TEST(CodegenConversions, RealToEveryIntegerTypeRoundsThenSaturates) {
    for (const IntType& t : kTargets) {
        checkRealToInt<float>("REAL", t);
        checkRealToInt<double>("LREAL", t);
    }
}

// Constant arguments are folded by the compiler to what the VM computes.
// REAL_TO_BOOL is x <> 0.0: -0.0 is FALSE, NaN TRUE (LANGUAGE.md's full conversion matrix).
TEST(CodegenConversions, RealToBoolIsNotEqualToZero) {
    Runner r(R"(
PROGRAM Main
  VAR r : REAL := 1.5; z : REAL := -0.0; lr : LREAL := -2.0e-300; lz : LREAL; n : REAL;
      b1 : BOOL; b2 : BOOL; b3 : BOOL; b4 : BOOL := TRUE; b5 : BOOL; END_VAR
  n := SQRT(-1.0);
  b1 := REAL_TO_BOOL(r);
  b2 := REAL_TO_BOOL(z);
  b3 := LREAL_TO_BOOL(lr);
  b4 := TO_BOOL(lz);
  b5 := REAL_TO_BOOL(n);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    ASSERT_TRUE(std::isnan(r.get<float>("Main.n")));
    EXPECT_TRUE(r.get<bool>("Main.b1"));
    EXPECT_FALSE(r.get<bool>("Main.b2"));
    EXPECT_TRUE(r.get<bool>("Main.b3"));
    EXPECT_FALSE(r.get<bool>("Main.b4"));
    EXPECT_TRUE(r.get<bool>("Main.b5"));
}

TEST(CodegenConversions, ConstantArgumentsSaturateLikeVariables) {
    Runner r(R"(
PROGRAM Main
VAR
    s1 : SINT; s2 : SINT; u1 : USINT; w1 : WORD; ud : UDINT; ul : ULINT; i1 : INT; d1 : DINT; t1 : SINT;
END_VAR
s1 := REAL_TO_SINT(300.0);
s2 := LREAL_TO_SINT(-1.0E30);
u1 := REAL_TO_USINT(-5.0);
w1 := TO_WORD(70000.0);
ud := LREAL_TO_UDINT(-1.0);
ul := LREAL_TO_ULINT(1.0E30);
i1 := REAL_TO_INT(32767.5);
d1 := LREAL_TO_DINT(-2147483648.5);
t1 := TRUNC_SINT(-128.9);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int8_t>("Main.s1"), 127);
    EXPECT_EQ(r.get<std::int8_t>("Main.s2"), -128);
    EXPECT_EQ(r.get<std::uint8_t>("Main.u1"), 0);
    EXPECT_EQ(r.get<std::uint16_t>("Main.w1"), 65535);
    EXPECT_EQ(r.get<std::uint32_t>("Main.ud"), 0u);
    EXPECT_EQ(r.get<std::uint64_t>("Main.ul"), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(r.get<std::int16_t>("Main.i1"), 32767); // 32768 after rounding half to even
    EXPECT_EQ(r.get<std::int32_t>("Main.d1"), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(r.get<std::int8_t>("Main.t1"), -128);
}

// TIME counts milliseconds to and from every integer and bit-string type (whole milliseconds
// toward zero, then the low bits of the target); LTIME counts nanoseconds; constant initial
// values (folded by the compiler) give the same (docs/language-notes.md).
TEST(CodegenConversions, TimeToEveryIntegerTypeCountsMillisecondsAndWraps) {
    for (const IntType& t : kTargets) {
        const std::string n = t.name;
        Runner r("PROGRAM Main\nVAR\n  tm : TIME := T#-1500us; big : TIME := T#300s; lt : LTIME := LTIME#300ns;\n"
                 "  k : " +
                 n + " := 7; a, o, l : " + n + "; c : " + n + " := TIME_TO_" + n +
                 "(T#300s);\n  back : TIME; cback : TIME := " + n + "_TO_TIME(" + n +
                 "#7);\nEND_VAR\n"
                 "a := TIME_TO_" +
                 n + "(tm);\no := TO_" + n + "(big);\nl := LTIME_TO_" + n + "(lt);\nback := " + n +
                 "_TO_TIME(k);\nEND_PROGRAM\n");
        ASSERT_TRUE(r.ok) << n << ": " << r.errors();
        ASSERT_EQ(r.cycle(), vm::Trap::None) << n;
        auto read = [&](const std::string& name) -> std::uint64_t {
            switch (t.bits) {
            case 8: return r.get<std::uint8_t>("Main." + name);
            case 16: return r.get<std::uint16_t>("Main." + name);
            case 32: return r.get<std::uint32_t>("Main." + name);
            default: return r.get<std::uint64_t>("Main." + name);
            }
        };
        EXPECT_EQ(read("a"), mask(t, ~std::uint64_t{0})) << n << ": T#-1.5ms is -1 ms";
        EXPECT_EQ(read("o"), mask(t, 300'000)) << n;
        EXPECT_EQ(read("c"), mask(t, 300'000)) << n << " (folded)";
        EXPECT_EQ(read("l"), mask(t, 300)) << n << ": LTIME counts nanoseconds";
        EXPECT_EQ(r.get<std::int64_t>("Main.back"), 7'000'000) << n;
        EXPECT_EQ(r.get<std::int64_t>("Main.cback"), 7'000'000) << n << " (folded)";
    }
}

TEST(CodegenConversions, TextToNumberReadsTheWholeTextAsALiteralOfTheTarget) {
    Runner r(R"(
PROGRAM Main
VAR
    s : STRING := '  12  ';
    w : WSTRING := "16#7F";
    a : INT; b : INT; c : SINT; d : SINT; e : UINT; f : BYTE; g : ULINT; h : LINT; i : INT; j : DINT; k : SINT;
    r1 : REAL; r2 : REAL; r3 : LREAL; r4 : REAL; b1 : BOOL; b2 : BOOL; b3 : BOOL;
END_VAR
a := STRING_TO_INT(s);
b := STRING_TO_INT('12x');
c := STRING_TO_SINT('300');
d := TO_SINT('-128');
e := STRING_TO_UINT('-1');
f := STRING_TO_BYTE('2#1111_0000');
g := STRING_TO_ULINT('18446744073709551615');
h := STRING_TO_LINT('9223372036854775808');
i := STRING_TO_INT('INT#-5');
j := WSTRING_TO_DINT(w);
k := TO_SINT(w);
r1 := STRING_TO_REAL('1.5abc');
r2 := TO_REAL(' -1.5E3 ');
r3 := WSTRING_TO_LREAL("2.5");
r4 := STRING_TO_REAL('1e39');
b1 := STRING_TO_BOOL('TRUE');
b2 := TO_BOOL('1');
b3 := STRING_TO_BOOL('2');
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.a"), 12);
    EXPECT_EQ(r.get<std::int16_t>("Main.b"), 0);
    EXPECT_EQ(r.get<std::int8_t>("Main.c"), 0);
    EXPECT_EQ(r.get<std::int8_t>("Main.d"), -128);
    EXPECT_EQ(r.get<std::uint16_t>("Main.e"), 0);
    EXPECT_EQ(r.get<std::uint8_t>("Main.f"), 240);
    EXPECT_EQ(r.get<std::uint64_t>("Main.g"), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(r.get<std::int64_t>("Main.h"), 0);
    EXPECT_EQ(r.get<std::int16_t>("Main.i"), -5);
    EXPECT_EQ(r.get<std::int32_t>("Main.j"), 127);
    EXPECT_EQ(r.get<std::int8_t>("Main.k"), 127);
    EXPECT_EQ(r.get<float>("Main.r1"), 0.0F);
    EXPECT_EQ(r.get<float>("Main.r2"), -1500.0F);
    EXPECT_EQ(r.get<double>("Main.r3"), 2.5);
    EXPECT_EQ(r.get<float>("Main.r4"), 0.0F);
    EXPECT_TRUE(r.get<bool>("Main.b1"));
    EXPECT_TRUE(r.get<bool>("Main.b2"));
    EXPECT_FALSE(r.get<bool>("Main.b3"));
}

TEST(CodegenConversions, MuxSelectorOutOfRangeTrapsAtTheCall) {
    Runner r(R"(
PROGRAM Main
VAR
    k : INT; kl : LINT; x : INT; y : INT;
END_VAR
x := MUX(k, 10, 20, 30);
y := MUX(kl, 1, 2);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.x"), 10);
    for (const std::int16_t k : {std::int16_t{3}, std::int16_t{-1}, std::int16_t{32767}}) {
        r.set<std::int16_t>("Main.k", k);
        r.set<std::int16_t>("Main.x", 0);
        EXPECT_EQ(r.cycle(), vm::Trap::MuxSelector) << k;
        EXPECT_EQ(r.get<std::int16_t>("Main.x"), 0) << k; // nothing selected, nothing written
    }
    r.set<std::int16_t>("Main.k", 2);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.x"), 30);
    // A 64-bit K is not selected by its low bits.
    r.set<std::int64_t>("Main.kl", std::int64_t{1} << 32);
    EXPECT_EQ(r.cycle(), vm::Trap::MuxSelector);
    r.set<std::int64_t>("Main.kl", 1);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), 2);
}

} // namespace
} // namespace takt::compiler
