// Text to number (STRING_TO_INT, STRING_TO_REAL, TO_* from text): the whole text, blanks around
// it allowed, must be an ST literal of the target type whose value that type holds; anything
// else gives 0 (docs/language-notes.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "text_number.h"

namespace takt::vm {
namespace {

using bytecode::TextNumber;

TEST(TextNumber, DecimalWithSignBlanksAndSeparators) {
    EXPECT_EQ(textToInt("123", TextNumber::Int), 123);
    EXPECT_EQ(textToInt("  -17\t", TextNumber::Int), -17);
    EXPECT_EQ(textToInt("+42", TextNumber::Dint), 42);
    EXPECT_EQ(textToInt("1_000", TextNumber::Int), 1000);
    EXPECT_EQ(textToInt("-0", TextNumber::Usint), 0);
    EXPECT_EQ(textToInt("007", TextNumber::Sint), 7);
}

TEST(TextNumber, BasedIntegersWithoutSign) {
    EXPECT_EQ(textToInt("16#FF", TextNumber::Int), 255);
    EXPECT_EQ(textToInt("16#ff", TextNumber::Byte), 255);
    EXPECT_EQ(textToInt("8#17", TextNumber::Int), 15);
    EXPECT_EQ(textToInt("2#1010", TextNumber::Int), 10);
    EXPECT_EQ(textToInt("2#1111_0000", TextNumber::Byte), 240);
    EXPECT_EQ(textToInt("16#FFFF_FFFF_FFFF_FFFF", TextNumber::Lword), -1); // all 64 bits set
    EXPECT_EQ(textToInt("-16#FF", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("+16#FF", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("10#99", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("2#102", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("16#", TextNumber::Int), 0);
}

TEST(TextNumber, TypePrefixMustNameTheTarget) {
    EXPECT_EQ(textToInt("INT#-5", TextNumber::Int), -5);
    EXPECT_EQ(textToInt("int#16#7F", TextNumber::Int), 127);
    EXPECT_EQ(textToInt("WORD#16#FFFF", TextNumber::Word), 65535);
    EXPECT_EQ(textToInt("DINT#5", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("UINT#5", TextNumber::Int), 0);
    EXPECT_EQ(textToInt("-INT#5", TextNumber::Int), 0);
    EXPECT_EQ(textToReal("REAL#1.5", TextNumber::Real), 1.5);
    EXPECT_EQ(textToReal("LREAL#-2.25", TextNumber::Lreal), -2.25);
    EXPECT_EQ(textToReal("REAL#1.5", TextNumber::Lreal), 0.0);
}

TEST(TextNumber, AnythingElseInTheTextGivesZero) {
    for (const char* bad :
         {"", "   ", "12x", "x12", "1 2", "1__0", "_1", "1_", "--1", "+", "1.5", "1e3", "0x10", "12 ;", "TRUE"}) {
        EXPECT_EQ(textToInt(bad, TextNumber::Dint), 0) << '"' << bad << '"';
    }
}

// Every integer and bit-string type: its own limits read back, one beyond them gives 0 (no
// wrap, no clamp), at every width.
TEST(TextNumber, OutOfTheTargetRangeGivesZero) {
    struct Case {
        TextNumber type;
        const char* min;
        const char* max;
        const char* below;
        const char* above;
        std::int64_t minValue;
        std::int64_t maxValue;
    };
    const Case cases[] = {
        {TextNumber::Sint, "-128", "127", "-129", "128", -128, 127},
        {TextNumber::Int, "-32768", "32767", "-32769", "32768", -32768, 32767},
        {TextNumber::Dint, "-2147483648", "2147483647", "-2147483649", "2147483648", -2147483648LL, 2147483647},
        {TextNumber::Lint, "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "9223372036854775808",
         std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()},
        {TextNumber::Usint, "0", "255", "-1", "256", 0, 255},
        {TextNumber::Uint, "0", "65535", "-1", "65536", 0, 65535},
        {TextNumber::Udint, "0", "4294967295", "-1", "4294967296", 0, 4294967295LL},
        {TextNumber::Ulint, "0", "18446744073709551615", "-1", "18446744073709551616", 0, -1},
        {TextNumber::Byte, "0", "16#FF", "-1", "16#100", 0, 255},
        {TextNumber::Word, "0", "16#FFFF", "-1", "16#1_0000", 0, 65535},
        {TextNumber::Dword, "0", "4294967295", "-1", "16#1_0000_0000", 0, 4294967295LL},
        {TextNumber::Lword, "0", "16#FFFFFFFFFFFFFFFF", "-1", "16#1_0000_0000_0000_0000", 0, -1},
    };
    for (const Case& c : cases) {
        EXPECT_EQ(textToInt(c.min, c.type), c.minValue) << c.min;
        EXPECT_EQ(textToInt(c.max, c.type), c.maxValue) << c.max;
        EXPECT_EQ(textToInt(c.below, c.type), 0) << c.below;
        EXPECT_EQ(textToInt(c.above, c.type), 0) << c.above;
    }
    EXPECT_EQ(textToInt("16#FFFF", TextNumber::Int), 0); // a based literal denotes its unsigned value
    EXPECT_EQ(textToInt("99999999999999999999999", TextNumber::Lint), 0);
}

TEST(TextNumber, BoolReadsTrueFalseAndZeroOne) {
    EXPECT_EQ(textToInt("TRUE", TextNumber::Bool), 1);
    EXPECT_EQ(textToInt(" false ", TextNumber::Bool), 0);
    EXPECT_EQ(textToInt("BOOL#True", TextNumber::Bool), 1);
    EXPECT_EQ(textToInt("1", TextNumber::Bool), 1);
    EXPECT_EQ(textToInt("0", TextNumber::Bool), 0);
    EXPECT_EQ(textToInt("2", TextNumber::Bool), 0);
    EXPECT_EQ(textToInt("yes", TextNumber::Bool), 0);
}

TEST(TextNumber, RealLiteralForms) {
    EXPECT_EQ(textToReal("2.5", TextNumber::Real), 2.5);
    EXPECT_EQ(textToReal(" -1.5E3 ", TextNumber::Real), -1500.0);
    EXPECT_EQ(textToReal("1e3", TextNumber::Lreal), 1000.0);
    EXPECT_EQ(textToReal("1.25e-2", TextNumber::Lreal), 0.0125);
    EXPECT_EQ(textToReal("+7", TextNumber::Real), 7.0);
    EXPECT_EQ(textToReal("1_000.000_5", TextNumber::Lreal), 1000.0005);
    EXPECT_EQ(textToReal("16#FF", TextNumber::Real), 255.0);
    // REAL texts round once, to single precision.
    EXPECT_EQ(textToReal("0.1", TextNumber::Real), static_cast<double>(0.1F));
    EXPECT_EQ(textToReal("0.1", TextNumber::Lreal), 0.1);
    EXPECT_EQ(textToReal("16777217", TextNumber::Real), 16777216.0);
    for (const char* bad : {"", "1.5abc", ".5", "1.", "1.e3", "e3", "1e", "1e+", "- 1", "1,5", "inf", "nan", "INF",
                            "-16#FF", "0x1p3", "1.5 2"}) {
        EXPECT_EQ(textToReal(bad, TextNumber::Real), 0.0) << '"' << bad << '"';
        EXPECT_EQ(textToReal(bad, TextNumber::Lreal), 0.0) << '"' << bad << '"';
    }
}

TEST(TextNumber, RealBeyondTheTypeRangeGivesZero) {
    EXPECT_EQ(textToReal("3.4028234e38", TextNumber::Real), static_cast<double>(std::numeric_limits<float>::max()));
    EXPECT_EQ(textToReal("3.5e38", TextNumber::Real), 0.0);
    EXPECT_EQ(textToReal("-1e39", TextNumber::Real), 0.0);
    EXPECT_EQ(textToReal("3.5e38", TextNumber::Lreal), 3.5e38);
    EXPECT_EQ(textToReal("1e309", TextNumber::Lreal), 0.0);
    EXPECT_EQ(textToReal("-1e400", TextNumber::Lreal), 0.0);
}

TEST(TextNumber, WrongKindOfTargetGivesZero) {
    EXPECT_EQ(textToInt("5", TextNumber::Real), 0);
    EXPECT_EQ(textToReal("5", TextNumber::Int), 0.0);
    EXPECT_EQ(textToInt("5", static_cast<TextNumber>(99)), 0);
}

} // namespace
} // namespace takt::vm
