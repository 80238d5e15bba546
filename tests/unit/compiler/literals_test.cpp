#include "takt/compiler/literals.h"

#include <gtest/gtest.h>

namespace takt::compiler {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kS = 1'000 * kMs;

std::uint64_t intOf(std::string_view text) {
    std::uint64_t v = 0;
    std::string err;
    EXPECT_TRUE(decodeInteger(text, v, err)) << text << ": " << err;
    return v;
}

std::string intError(std::string_view text) {
    std::uint64_t v = 0;
    std::string err;
    EXPECT_FALSE(decodeInteger(text, v, err)) << text;
    return err;
}

TEST(Literals, DecimalAndBasedIntegers) {
    EXPECT_EQ(intOf("0"), 0u);
    EXPECT_EQ(intOf("42"), 42u);
    EXPECT_EQ(intOf("1_000_000"), 1000000u);
    EXPECT_EQ(intOf("2#1010"), 10u);
    EXPECT_EQ(intOf("2#1111_0000"), 0xF0u);
    EXPECT_EQ(intOf("8#17"), 15u);
    EXPECT_EQ(intOf("16#FF"), 255u);
    EXPECT_EQ(intOf("16#dead_BEEF"), 0xDEADBEEFu);
    EXPECT_EQ(intOf("18446744073709551615"), 18446744073709551615ull);
    EXPECT_EQ(intOf("16#FFFF_FFFF_FFFF_FFFF"), 0xFFFFFFFFFFFFFFFFull);
}

TEST(Literals, IntegerErrorsNameTheText) {
    EXPECT_NE(intError("18446744073709551616").find("18446744073709551616"), std::string::npos);
    EXPECT_NE(intError("16#1_0000_0000_0000_0000").find("64 bits"), std::string::npos);
    EXPECT_NE(intError("2#102").find("'2'"), std::string::npos);
    EXPECT_NE(intError("8#9").find("base 8"), std::string::npos);
    EXPECT_NE(intError("10#5").find("base '10'"), std::string::npos);
    EXPECT_NE(intError("16#").find("no digits"), std::string::npos);
}

TEST(Literals, Reals) {
    double v = 0;
    std::string err;
    ASSERT_TRUE(decodeReal("1.5", v, err));
    EXPECT_DOUBLE_EQ(v, 1.5);
    ASSERT_TRUE(decodeReal("1.0E-3", v, err));
    EXPECT_DOUBLE_EQ(v, 0.001);
    ASSERT_TRUE(decodeReal("2e5", v, err));
    EXPECT_DOUBLE_EQ(v, 200000.0);
    ASSERT_TRUE(decodeReal("1_000.25", v, err));
    EXPECT_DOUBLE_EQ(v, 1000.25);
    EXPECT_FALSE(decodeReal("1.0E400", v, err));
    EXPECT_NE(err.find("1.0E400"), std::string::npos);
    EXPECT_FALSE(decodeReal("1.x", v, err));
}

std::string str(std::string_view text, bool wide = false) {
    std::string v;
    std::string err;
    EXPECT_TRUE(decodeString(text, wide, v, err)) << text << ": " << err;
    return v;
}

TEST(Literals, StringEscapes) {
    EXPECT_EQ(str("''"), "");
    EXPECT_EQ(str("'abc'"), "abc");
    EXPECT_EQ(str("'a$'b$N'"), "a'b\n");
    EXPECT_EQ(str("'$$ $L$n$P$R$T$\"'"), "$ \n\n\f\r\t\"");
    EXPECT_EQ(str("'$41$0a'"), "A\n");
    EXPECT_EQ(str("\"$00E9\"", true), "\xC3\xA9");
    EXPECT_EQ(str("\"$20AC x\"", true), "\xE2\x82\xAC x");
    EXPECT_EQ(str("\"$'$\"\"", true), "'\"");
}

TEST(Literals, BadEscapesAreErrors) {
    std::string v;
    std::string err;
    EXPECT_FALSE(decodeString("'$Q'", false, v, err));
    EXPECT_NE(err.find("$Q"), std::string::npos);
    EXPECT_FALSE(decodeString("'$4'", false, v, err));
    EXPECT_FALSE(decodeString("'abc$'", false, v, err));
    EXPECT_FALSE(decodeString("\"$41\"", true, v, err)); // WSTRING needs four hex digits
    EXPECT_FALSE(decodeString("'abc", false, v, err));
}

std::int64_t dur(std::string_view body) {
    std::int64_t v = 0;
    std::string err;
    EXPECT_TRUE(decodeDuration(body, v, err)) << body << ": " << err;
    return v;
}

TEST(Literals, Durations) {
    EXPECT_EQ(dur("1h2m3s4ms"), ((3600 + 120 + 3) * kS) + 4 * kMs);
    EXPECT_EQ(dur("1d"), 86400 * kS);
    EXPECT_EQ(dur("1.5s"), 1500 * kMs);
    EXPECT_EQ(dur("-5s"), -5 * kS);
    EXPECT_EQ(dur("1h_30m"), 5400 * kS);
    EXPECT_EQ(dur("10us"), 10'000);
    EXPECT_EQ(dur("7ns"), 7);
    EXPECT_EQ(dur("2M1S"), 121 * kS);
    EXPECT_EQ(dur("0.25d"), 6 * 3600 * kS);
    EXPECT_EQ(dur("1_000ms"), kS);
}

TEST(Literals, DurationErrors) {
    std::int64_t v = 0;
    std::string err;
    EXPECT_FALSE(decodeDuration("5", v, err));
    EXPECT_NE(err.find("unit"), std::string::npos);
    EXPECT_FALSE(decodeDuration("5x", v, err));
    EXPECT_NE(err.find("'x'"), std::string::npos);
    EXPECT_FALSE(decodeDuration("", v, err));
    EXPECT_FALSE(decodeDuration("-", v, err));
    EXPECT_FALSE(decodeDuration("200000d", v, err)); // beyond 292 years of nanoseconds
    EXPECT_NE(err.find("out of range"), std::string::npos);
}

TEST(Literals, DatesAndTimesOfDay) {
    std::int64_t v = 0;
    std::string err;
    ASSERT_TRUE(decodeDate("1970-01-01", v, err));
    EXPECT_EQ(v, 0);
    ASSERT_TRUE(decodeDate("2024-01-15", v, err));
    EXPECT_EQ(v, 19737LL * 86400 * kS);
    ASSERT_TRUE(decodeDate("2024-02-29", v, err)); // leap year
    EXPECT_FALSE(decodeDate("2023-02-29", v, err));
    EXPECT_NE(err.find("day 29"), std::string::npos);
    EXPECT_FALSE(decodeDate("2024-13-01", v, err));
    EXPECT_NE(err.find("month 13"), std::string::npos);
    EXPECT_FALSE(decodeDate("2024-01", v, err));

    ASSERT_TRUE(decodeTimeOfDay("12:30:00.5", v, err));
    EXPECT_EQ(v, (12 * 3600 + 30 * 60) * kS + 500 * kMs);
    ASSERT_TRUE(decodeTimeOfDay("23:59:59", v, err));
    EXPECT_FALSE(decodeTimeOfDay("24:00:00", v, err));
    EXPECT_FALSE(decodeTimeOfDay("12:60:00", v, err));
    EXPECT_FALSE(decodeTimeOfDay("12", v, err));

    ASSERT_TRUE(decodeDateAndTime("2024-01-15-12:30:00", v, err));
    EXPECT_EQ(v, 19737LL * 86400 * kS + (12 * 3600 + 30 * 60) * kS);
    EXPECT_FALSE(decodeDateAndTime("2024-01-15", v, err));
    EXPECT_FALSE(decodeDateAndTime("2024-01-15-25:00:00", v, err));
}

ast::Address addr(std::string_view text) {
    ast::Address a;
    std::string err;
    EXPECT_TRUE(parseAddress(text, a, err)) << text << ": " << err;
    return a;
}

TEST(Literals, DirectAddresses) {
    ast::Address a = addr("%IX1.2");
    EXPECT_EQ(a.area, ast::AddressArea::Input);
    EXPECT_EQ(a.size, ast::AddressSize::Bit);
    EXPECT_EQ(a.indices, (std::vector<std::uint32_t>{1, 2}));
    a = addr("%QW3");
    EXPECT_EQ(a.area, ast::AddressArea::Output);
    EXPECT_EQ(a.size, ast::AddressSize::Word);
    EXPECT_EQ(a.indices, (std::vector<std::uint32_t>{3}));
    a = addr("%md10");
    EXPECT_EQ(a.area, ast::AddressArea::Memory);
    EXPECT_EQ(a.size, ast::AddressSize::DWord);
    a = addr("%I*");
    EXPECT_TRUE(a.wildcard);
    EXPECT_EQ(a.size, ast::AddressSize::None);
    a = addr("%QX*");
    EXPECT_TRUE(a.wildcard);
    EXPECT_EQ(a.size, ast::AddressSize::Bit);
    EXPECT_EQ(addr("%IB0").size, ast::AddressSize::Byte);
    EXPECT_EQ(addr("%ML7").size, ast::AddressSize::LWord);
    a = addr("%I0.0");
    EXPECT_EQ(a.size, ast::AddressSize::None);
    EXPECT_EQ(a.text(), "%I0.0");
    EXPECT_EQ(addr("%qx2.7").text(), "%QX2.7");
}

// A bit address without its bit number is bit 0 of that byte; a sized address with further
// numbers that are all 0 (OpenPLC's EtherCAT mapping) is the first number's place.
TEST(Literals, ShortBitAndHierarchicalAddresses) {
    EXPECT_EQ(addr("%IX1").text(), "%IX1.0");
    EXPECT_EQ(addr("%Q5").text(), "%Q5.0");
    EXPECT_EQ(addr("%IW0.0").text(), "%IW0");
    EXPECT_EQ(addr("%ID2.0.0").indices, (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(addr("%ML50").size, ast::AddressSize::LWord);
}

TEST(Literals, BadAddressesExplainWhy) {
    ast::Address a;
    std::string err;
    EXPECT_FALSE(parseAddress("%Z1", a, err));
    EXPECT_NE(err.find("I, Q or M"), std::string::npos);
    EXPECT_FALSE(parseAddress("%IX1.2.3", a, err));
    EXPECT_NE(err.find("byte.bit"), std::string::npos);
    EXPECT_FALSE(parseAddress("%IX1.8", a, err));
    EXPECT_NE(err.find("0..7"), std::string::npos);
    EXPECT_FALSE(parseAddress("%IW1.2", a, err));
    EXPECT_NE(err.find("flat"), std::string::npos);
    EXPECT_FALSE(parseAddress("%ID0.0.1", a, err));
    EXPECT_FALSE(parseAddress("%IW1.", a, err));
    EXPECT_FALSE(parseAddress("%I*1", a, err));
    EXPECT_FALSE(parseAddress("%IQ1", a, err));
    EXPECT_FALSE(parseAddress("%I", a, err));
}

TEST(Literals, ElementaryTypeNames) {
    for (std::string_view n : {"BOOL", "int", "Dint", "ULINT", "lword", "LREAL", "TIME", "LTIME", "DATE", "TOD",
                               "TIME_OF_DAY", "DT", "DATE_AND_TIME", "LDT", "STRING", "WSTRING", "CHAR", "WCHAR"}) {
        EXPECT_TRUE(isElementaryTypeName(n)) << n;
    }
    for (std::string_view n : {"Mode", "TON", "INTEGER", "", "BOOLEAN", "STRINGS"}) {
        EXPECT_FALSE(isElementaryTypeName(n)) << n;
    }
}

TEST(Literals, PrefixAndBody) {
    EXPECT_EQ(literalPrefix("TIME#1s"), "TIME");
    EXPECT_EQ(literalBody("TIME#1s"), "1s");
    EXPECT_EQ(literalBody("42"), "42");
    EXPECT_EQ(literalPrefix("42"), "");
}

} // namespace
} // namespace takt::compiler
