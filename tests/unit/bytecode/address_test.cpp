// The direct-address parser and address-mode rule shared by io.toml, drivers and the compiler.
#include <string>

#include <gtest/gtest.h>

#include "takt/bytecode/address.h"

namespace takt::bytecode {
namespace {

DirectAddress parsed(const std::string& text) {
    DirectAddress a;
    std::string error;
    EXPECT_TRUE(parseDirectAddress(text, a, error)) << text << ": " << error;
    return a;
}

std::string failure(const std::string& text) {
    DirectAddress a;
    std::string error;
    EXPECT_FALSE(parseDirectAddress(text, a, error)) << text;
    return error;
}

TEST(DirectAddress, ParsesEveryWidthAndArea) {
    DirectAddress a = parsed("%QX1.7");
    EXPECT_EQ(a.area, IoArea::Output);
    EXPECT_TRUE(a.isBit());
    EXPECT_EQ(a.index, 1U);
    EXPECT_EQ(a.bit, 7);
    a = parsed("%i0.2");
    EXPECT_EQ(a.area, IoArea::Input);
    EXPECT_TRUE(a.isBit());
    EXPECT_EQ(parsed("%MB5").width, AddressWidth::Byte);
    EXPECT_EQ(parsed("%IW3").width, AddressWidth::Word);
    EXPECT_EQ(parsed("%QD2").width, AddressWidth::DWord);
    EXPECT_EQ(parsed("%QL1").width, AddressWidth::LWord);
    EXPECT_EQ(formatDirectAddress(parsed("%q0.1")), "%QX0.1");
    EXPECT_EQ(formatDirectAddress(parsed("%iw12")), "%IW12");
}

TEST(DirectAddress, EachWidthReadsAsTheBitStringTypeOfItsSize) {
    EXPECT_EQ(addressValueKind(parsed("%IX0.3").width), ValueKind::Bool);
    EXPECT_EQ(addressValueKind(parsed("%QB1").width), ValueKind::Byte);
    EXPECT_EQ(addressValueKind(parsed("%MW2").width), ValueKind::Word);
    EXPECT_EQ(addressValueKind(parsed("%ID3").width), ValueKind::DWord);
    EXPECT_EQ(addressValueKind(parsed("%QL4").width), ValueKind::LWord);
    // addressWidthOfBytes inverts addressWidthBytes for every byte-aligned width.
    for (const AddressWidth w : {AddressWidth::Byte, AddressWidth::Word, AddressWidth::DWord, AddressWidth::LWord}) {
        EXPECT_EQ(addressWidthOfBytes(addressWidthBytes(w)), w) << addressWidthBytes(w);
    }
}

TEST(DirectAddress, WordAndByteMode) {
    EXPECT_EQ(parsed("%QW3").byteOffset(false), 6U);
    EXPECT_EQ(parsed("%QW3").byteOffset(true), 3U);
    EXPECT_EQ(parsed("%QD1").byteOffset(false), 4U);
    EXPECT_EQ(parsed("%QL1").byteOffset(false), 8U);
    EXPECT_EQ(parsed("%QB3").byteOffset(false), 3U);
    EXPECT_EQ(parsed("%QX3.1").byteOffset(false), 3U);
    EXPECT_EQ(addressByteOffset(0xFFFFFFFFU, 8, false), 0xFFFFFFFFULL * 8);
}

TEST(DirectAddress, RejectsMalformedText) {
    EXPECT_NE(failure("QX0.0").find("must start with '%'"), std::string::npos);
    EXPECT_NE(failure("%Z0").find("area I, Q or M"), std::string::npos);
    EXPECT_NE(failure("%QX0.1.2").find("byte.bit"), std::string::npos);
    EXPECT_NE(failure("%QX0.8").find("outside 0..7"), std::string::npos);
    EXPECT_NE(failure("%QW").find("needs a number"), std::string::npos);
    EXPECT_NE(failure("%QW1.2").find("flat"), std::string::npos);
    EXPECT_NE(failure("%QW1.0.3").find("flat"), std::string::npos);
    EXPECT_NE(failure("%QW1x").find("unexpected"), std::string::npos);
    EXPECT_NE(failure("%QW1.").find("needs a number at its end"), std::string::npos);
    EXPECT_NE(failure("%QW99999999999").find("too large"), std::string::npos);
    EXPECT_NE(failure("%QX*").find("needs a number"), std::string::npos);
    EXPECT_NE(failure("%QX*").find("wildcard"), std::string::npos);
    EXPECT_FALSE(failure("%").empty());
}

// The short forms the compiler accepts are read the same by every layer (one grammar): a bit
// address without its bit is bit 0, a sized address's further numbers that are all 0 name the
// first number's place.
TEST(DirectAddress, ShortBitAndHierarchicalForms) {
    EXPECT_EQ(formatDirectAddress(parsed("%IX1")), "%IX1.0");
    EXPECT_EQ(formatDirectAddress(parsed("%q5")), "%QX5.0");
    EXPECT_EQ(formatDirectAddress(parsed("%IW0.0")), "%IW0");
    EXPECT_EQ(formatDirectAddress(parsed("%ID2.0.0")), "%ID2");
    EXPECT_EQ(parsed("%QW3.0").byteOffset(false), 6U);
}

TEST(DirectAddress, WildcardsOnlyInTheWrittenForm) {
    WrittenAddress w;
    std::string error;
    ASSERT_TRUE(parseWrittenAddress("%QX*", w, error)) << error;
    EXPECT_TRUE(w.wildcard);
    EXPECT_TRUE(w.sizeLetter);
    ASSERT_TRUE(parseWrittenAddress("%I*", w, error)) << error;
    EXPECT_FALSE(w.sizeLetter);
    EXPECT_FALSE(parseWrittenAddress("%I*1", w, error));
    EXPECT_NE(error.find("nothing may follow"), std::string::npos) << error;
}

} // namespace
} // namespace takt::bytecode
