// Value equality over the type table (EQ_AGG, `takt test`): by member and element, not by raw
// bytes; and the verifier's refusal of types the walk cannot run on.
#include "takt/bytecode/value_compare.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "bytecode_test_util.h"
#include "takt/bytecode/verifier.h"

namespace takt::bytecode {
namespace {

using test::scalar;

// 0 BOOL, 1 DINT, 2 REAL, 3 LREAL, 4 STRING[5],
// 5 Rec : STRUCT flag : BOOL (0); count : DINT (4); r : REAL (8); name : STRING[5] (12) END_STRUCT (size 20),
// 6 ARRAY [1..2, 0..2] OF Rec (size 120)
Module typesModule() {
    Module m;
    m.types = {scalar(ValueKind::Bool, "BOOL", 1), scalar(ValueKind::DInt, "DINT", 4),
               scalar(ValueKind::Real, "REAL", 4), scalar(ValueKind::LReal, "LREAL", 8)};
    TypeDesc str = scalar(ValueKind::String, "STRING[5]", 6);
    str.stringLength = 5;
    str.align = 1;
    m.types.push_back(str);
    TypeDesc rec;
    rec.kind = ValueKind::Struct;
    rec.name = "Rec";
    rec.size = 20;
    rec.align = 4;
    rec.fields = {{"flag", 0, 0, false}, {"count", 1, 4, false}, {"r", 2, 8, false}, {"name", 4, 12, false}};
    m.types.push_back(rec);
    TypeDesc arr;
    arr.kind = ValueKind::Array;
    arr.name = "ARRAY [1..2, 0..2] OF Rec";
    arr.size = 120;
    arr.align = 4;
    arr.element = 5;
    arr.bounds = {1, 2, 0, 2};
    m.types.push_back(arr);
    return m;
}

template <typename T> void put(std::vector<std::uint8_t>& v, std::size_t at, T x) {
    std::memcpy(v.data() + at, &x, sizeof x);
}

TEST(ValueCompare, PaddingAndBytesAfterTheTerminatorDoNotCount) {
    const Module m = typesModule();
    std::vector<std::uint8_t> a(20, 0);
    std::vector<std::uint8_t> b(20, 0);
    a[1] = 0xAA; // padding after flag
    b[2] = 0x55;
    std::memcpy(a.data() + 12, "ab\0xyz", 6); // 'ab' then garbage after the terminator
    std::memcpy(b.data() + 12, "ab\0\0\0\0", 6);
    EXPECT_TRUE(valuesEqual(m, 5, a.data(), b.data()));
    EXPECT_FALSE(firstDifference(m, 5, a.data(), b.data()).has_value());
    b[14] = 'c'; // 'abc'
    EXPECT_FALSE(valuesEqual(m, 5, a.data(), b.data()));
}

TEST(ValueCompare, StringWithoutTerminatorEndsAtItsLength) {
    const Module m = typesModule();
    std::vector<std::uint8_t> a(6, 0);
    std::vector<std::uint8_t> b(6, 0);
    std::memcpy(a.data(), "abcdeX", 6); // STRING[5] full: the sixth byte is not a character
    std::memcpy(b.data(), "abcdeY", 6);
    EXPECT_TRUE(valuesEqual(m, 4, a.data(), b.data()));
}

TEST(ValueCompare, RealsCompareWithEquals) {
    const Module m = typesModule();
    std::vector<std::uint8_t> a(20, 0);
    std::vector<std::uint8_t> b(20, 0);
    put(a, 8, 0.0f);
    put(b, 8, -0.0f);
    EXPECT_TRUE(valuesEqual(m, 5, a.data(), b.data())) << "0.0 = -0.0";
    const float nan = std::numeric_limits<float>::quiet_NaN();
    put(a, 8, nan);
    put(b, 8, nan);
    EXPECT_FALSE(valuesEqual(m, 5, a.data(), b.data())) << "NaN <> NaN, even with the same bits";
    const auto diff = firstDifference(m, 5, a.data(), b.data());
    ASSERT_TRUE(diff.has_value());
    EXPECT_EQ(diff->leaf, 2u);
    EXPECT_EQ(diff->offset, 8u);
}

TEST(ValueCompare, BoolComparesTruthAndIntegersExactly) {
    const Module m = typesModule();
    std::vector<std::uint8_t> a(20, 0);
    std::vector<std::uint8_t> b(20, 0);
    a[0] = 1;
    b[0] = 1;
    put(a, 4, std::int32_t{-5});
    put(b, 4, std::int32_t{-5});
    EXPECT_TRUE(valuesEqual(m, 5, a.data(), b.data()));
    put(b, 4, std::int32_t{5});
    EXPECT_FALSE(valuesEqual(m, 5, a.data(), b.data()));
}

TEST(ValueCompare, FirstDifferenceInDeclarationOrderWithItsPath) {
    const Module m = typesModule();
    std::vector<std::uint8_t> a(120, 0);
    std::vector<std::uint8_t> b(120, 0);
    // Element [2, 1] is the 5th in storage order (the last subscript fastest): offset 4 * 20.
    put(b, 4 * 20 + 8, 2.5f); // [2, 1].r
    put(b, 5 * 20 + 4, 1);    // [2, 2].count, later
    b[1 * 20 + 14] = 0;       // no change: still equal there
    const auto diff = firstDifference(m, 6, a.data(), b.data());
    ASSERT_TRUE(diff.has_value());
    ASSERT_EQ(diff->path.size(), 2u);
    EXPECT_EQ(diff->path[0].container, 6u);
    EXPECT_EQ(diff->path[0].index, 4u);
    EXPECT_EQ(elementSubscript(m.types[6], diff->path[0].index), "[2, 1]");
    EXPECT_EQ(diff->path[1].container, 5u);
    EXPECT_EQ(m.types[5].fields[diff->path[1].index].name, "r");
    EXPECT_EQ(diff->leaf, 2u);
    EXPECT_EQ(diff->offset, 4u * 20 + 8);
    EXPECT_EQ(elementSubscript(m.types[6], 0), "[1, 0]");
    EXPECT_EQ(elementSubscript(m.types[6], 5), "[2, 2]");
}

// EQ_AGG fp+0, fp+8, fp+128, type in a FUNCTION with a frame of `frame` bytes.
Module withCompare(const Module& m, std::uint32_t type, std::uint32_t frame = 256) {
    Module v = test::validModule();
    v.stackSize = 512;
    const auto base = static_cast<std::uint32_t>(v.types.size());
    for (TypeDesc t : m.types) {
        if (t.element != kNone) {
            t.element += base;
        }
        for (FieldDesc& f : t.fields) {
            f.type += base;
        }
        v.types.push_back(t);
    }
    const auto entry = static_cast<std::uint32_t>(v.code.size());
    test::emit(v, Opcode::EQ_AGG, {test::fp(0), test::fp(8), test::fp(128), base + type});
    test::emit(v, Opcode::RET, {});
    v.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(v.code.size()), frame, kNone, kNone});
    return v;
}

TEST(ValueCompareVerifier, AcceptsEqAggOnAStructAndItsExtent) {
    const VerifyResult ok = verify(withCompare(typesModule(), 5));
    EXPECT_TRUE(ok.ok()) << ok.message;
    EXPECT_TRUE(verify(withCompare(typesModule(), 6)).ok());
    // The ARRAY of 120 bytes at fp+128 leaves a 240-byte frame.
    const VerifyResult r = verify(withCompare(typesModule(), 6, 240));
    EXPECT_EQ(r.code, VerifyError::OperandRange) << r.message;
}

TEST(ValueCompareVerifier, RefusesTypesTheWalkCannotRunOn) {
    Module cyclic = typesModule();
    cyclic.types[5].fields.push_back({"self", 5, 0, false}); // a struct containing itself
    VerifyResult r = verify(withCompare(cyclic, 5));
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;
    EXPECT_NE(r.message.find("contains itself"), std::string::npos) << r.message;

    Module open = typesModule();
    open.types[6].bounds.clear(); // ARRAY [*]
    r = verify(withCompare(open, 6));
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;
    EXPECT_NE(r.message.find("no fixed bounds"), std::string::npos) << r.message;

    Module wrongSize = typesModule();
    wrongSize.types[6].size = 100;
    r = verify(withCompare(wrongSize, 6));
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;

    Module shortReal = typesModule();
    shortReal.types[2].size = 2; // REAL that would be read past its 2 bytes
    shortReal.types[5].fields[2].offset = 18;
    r = verify(withCompare(shortReal, 5));
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;

    r = verify(withCompare(typesModule(), 99));
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;
}

TEST(ValueCompareVerifier, ChecksTheTypeOfAnAssertFailValueFormat) {
    Module m = withCompare(typesModule(), 5);
    const auto entry = static_cast<std::uint32_t>(m.code.size());
    const std::uint32_t rec = m.pous.back().code; // reuse: the EQ_AGG's type word
    const std::uint32_t type = m.code[rec + 4];
    const std::uint32_t value = static_cast<std::uint32_t>(AssertFormat::Value);
    test::emit(m, Opcode::ASSERT_FAIL, {test::fp(8), test::fp(128), test::fp(0), value | type << kAssertTypeShift, 2});
    test::emit(m, Opcode::RET, {});
    m.pous.push_back({"A", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 256, kNone, kNone});
    VerifyResult r = verify(m);
    EXPECT_TRUE(r.ok()) << r.message;
    m.code[entry + 4] = value | 999u << kAssertTypeShift;
    r = verify(m);
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;
    m.code[entry + 4] = kAssertFormatCount;
    r = verify(m);
    EXPECT_EQ(r.code, VerifyError::Immediate) << r.message;
}

} // namespace
} // namespace takt::bytecode
