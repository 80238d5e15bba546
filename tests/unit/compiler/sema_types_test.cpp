// The type table (sizes, interning, names) and the IEC implicit-conversion matrix.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "sema_test_support.h"
#include "takt/compiler/sema/model.h"
#include "takt/compiler/sema/types.h"

namespace takt::compiler {
namespace {

using K = TypeKind;

TEST(SemaTypes, ElementarySizesMatchTheVmDataModel) {
    TypeTable t;
    const std::pair<K, std::uint32_t> expected[] = {
        {K::Bool, 1},  {K::SInt, 1},  {K::USInt, 1}, {K::Byte, 1},  {K::Char, 1},  {K::Int, 2},  {K::UInt, 2},
        {K::Word, 2},  {K::WChar, 2}, {K::DInt, 4},  {K::UDInt, 4}, {K::DWord, 4}, {K::Real, 4}, {K::LInt, 8},
        {K::ULInt, 8}, {K::LWord, 8}, {K::LReal, 8}, {K::Time, 8},  {K::LTime, 8}, {K::Date, 8}, {K::LDate, 8},
        {K::Tod, 8},   {K::LTod, 8},  {K::Dt, 8},    {K::Ldt, 8},
    };
    for (const auto& [kind, size] : expected) {
        EXPECT_EQ(t.get(kind)->size, size) << t.get(kind)->name();
        EXPECT_EQ(t.get(kind)->align, size) << t.get(kind)->name();
    }
}

TEST(SemaTypes, ElementaryNamesAreCaseInsensitiveWithLongSpellings) {
    TypeTable t;
    EXPECT_EQ(t.elementary("int"), t.get(K::Int));
    EXPECT_EQ(t.elementary("Time_Of_Day"), t.get(K::Tod));
    EXPECT_EQ(t.elementary("DATE_AND_TIME"), t.get(K::Dt));
    EXPECT_EQ(t.elementary("LDT"), t.get(K::Ldt));
    EXPECT_EQ(t.elementary("string"), t.get(K::String));
    EXPECT_EQ(t.elementary("Motor"), nullptr);
    EXPECT_EQ(t.elementary("ANY_INT"), nullptr); // literal pseudo-types have no spelling
}

TEST(SemaTypes, StringsAreInlineBoundedAndInterned) {
    TypeTable t;
    const StringType* s20 = t.string(false, 20);
    EXPECT_EQ(s20->size, 21u); // n characters + NUL
    EXPECT_EQ(s20->name(), "STRING[20]");
    EXPECT_EQ(t.string(false, 20), s20);
    const StringType* w10 = t.string(true, 10);
    EXPECT_EQ(w10->size, 22u); // 2 (n + 1)
    EXPECT_EQ(w10->align, 2u);
    EXPECT_EQ(t.get(K::String), t.string(false, 80));
    EXPECT_EQ(t.get(K::String)->size, 81u);
    EXPECT_EQ(t.get(K::String)->name(), "STRING");
}

TEST(SemaTypes, ArraysAreElementSizeTimesCountAndInterned) {
    TypeTable t;
    const ArrayType* a = t.array(t.get(K::Int), {{1, 3}, {0, 1}});
    EXPECT_EQ(a->size, 12u);
    EXPECT_EQ(a->align, 2u);
    EXPECT_EQ(a->name(), "ARRAY [1..3, 0..1] OF INT");
    EXPECT_EQ(t.array(t.get(K::Int), {{1, 3}, {0, 1}}), a);
    EXPECT_NE(t.array(t.get(K::Int), {{1, 3}}), a);
    EXPECT_EQ(t.array(t.get(K::LReal), {{-5, 4}})->size, 80u);
    EXPECT_EQ(t.ref(t.get(K::Int)), t.ref(t.get(K::Int)));
    EXPECT_EQ(t.ref(t.get(K::Int))->size, 8u);
}

TEST(SemaTypes, Classification) {
    TypeTable t;
    EXPECT_TRUE(isSignedInt(t.get(K::SInt)));
    EXPECT_FALSE(isSignedInt(t.get(K::UInt)));
    EXPECT_TRUE(isUnsignedInt(t.get(K::ULInt)));
    EXPECT_TRUE(isInteger(t.get(K::IntLiteral)));
    EXPECT_FALSE(isInteger(t.get(K::Word)));
    EXPECT_TRUE(isBitString(t.get(K::Bool)));
    EXPECT_TRUE(isBitString(t.get(K::LWord)));
    EXPECT_TRUE(isReal(t.get(K::RealLiteral)));
    EXPECT_TRUE(isNumeric(t.get(K::USInt)));
    EXPECT_FALSE(isNumeric(t.get(K::Time)));
    EXPECT_TRUE(isTimeLike(t.get(K::LTime)));
    EXPECT_TRUE(isDateLike(t.get(K::Tod)));
    EXPECT_TRUE(isString(t.string(true, 5)));
    EXPECT_EQ(bitWidth(t.get(K::Bool)), 1u);
    EXPECT_EQ(bitWidth(t.get(K::Word)), 16u);
    EXPECT_EQ(bitWidth(t.get(K::LInt)), 64u);
    SubrangeType sub("INT (0..10)", t.get(K::Int), 0, 10);
    EXPECT_TRUE(isSignedInt(&sub));
    AliasType alias("MyInt", &sub);
    EXPECT_EQ(stripAlias(&alias), &sub);
    EXPECT_TRUE(isInteger(&alias));
}

// The complete set of allowed implicit conversions between distinct elementary types (IEC
// widening): everything not listed must be refused.
std::set<std::pair<K, K>> allowedWidening() {
    std::set<std::pair<K, K>> s;
    auto chain = [&](std::initializer_list<K> kinds) {
        const std::vector<K> v(kinds);
        for (std::size_t i = 0; i < v.size(); ++i) {
            for (std::size_t j = i + 1; j < v.size(); ++j) {
                s.insert({v[i], v[j]});
            }
        }
    };
    chain({K::SInt, K::Int, K::DInt, K::LInt});
    chain({K::USInt, K::UInt, K::UDInt, K::ULInt});
    chain({K::Byte, K::Word, K::DWord, K::LWord});
    // unsigned -> strictly wider signed
    for (K u : {K::USInt}) {
        for (K w : {K::Int, K::DInt, K::LInt}) {
            s.insert({u, w});
        }
    }
    s.insert({K::UInt, K::DInt});
    s.insert({K::UInt, K::LInt});
    s.insert({K::UDInt, K::LInt});
    // integers -> reals that hold their range
    for (K i : {K::SInt, K::Int, K::USInt, K::UInt}) {
        s.insert({i, K::Real});
        s.insert({i, K::LReal});
    }
    s.insert({K::DInt, K::LReal});
    s.insert({K::UDInt, K::LReal});
    s.insert({K::Real, K::LReal});
    s.insert({K::Time, K::LTime});
    s.insert({K::Date, K::LDate});
    s.insert({K::Tod, K::LTod});
    s.insert({K::Dt, K::Ldt});
    s.insert({K::Char, K::String});
    s.insert({K::WChar, K::WString});
    return s;
}

TEST(SemaTypes, WideningMatrixOverAllElementaryPairs) {
    TypeTable t;
    const std::set<std::pair<K, K>> allowed = allowedWidening();
    int checked = 0;
    for (int a = static_cast<int>(K::Bool); a <= static_cast<int>(K::WString); ++a) {
        for (int b = static_cast<int>(K::Bool); b <= static_cast<int>(K::WString); ++b) {
            const K from = static_cast<K>(a);
            const K to = static_cast<K>(b);
            const bool expected = a == b || allowed.count({from, to}) > 0;
            EXPECT_EQ(implicitlyConvertible(t.get(from), t.get(to)), expected)
                << t.get(from)->name() << " -> " << t.get(to)->name();
            ++checked;
        }
    }
    EXPECT_EQ(checked, 27 * 27);
}

TEST(SemaTypes, NotableRefusals) {
    TypeTable t;
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Int), t.get(K::SInt)));   // narrowing
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Int), t.get(K::UInt)));   // signed -> unsigned
    EXPECT_FALSE(implicitlyConvertible(t.get(K::UInt), t.get(K::Int)));   // same width
    EXPECT_FALSE(implicitlyConvertible(t.get(K::DInt), t.get(K::Real)));  // REAL cannot hold DINT
    EXPECT_FALSE(implicitlyConvertible(t.get(K::LInt), t.get(K::LReal))); // nor LREAL LINT
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Bool), t.get(K::Byte)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Int), t.get(K::Word)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::LReal), t.get(K::Real)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::String), t.get(K::WString)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Time), t.get(K::DInt)));
}

TEST(SemaTypes, LiteralsStringsSubrangesEnumsAndReferences) {
    TypeTable t;
    const Type* intLit = t.get(K::IntLiteral);
    for (K k : {K::SInt, K::ULInt, K::Byte, K::LWord, K::Real, K::LReal, K::Bool}) {
        EXPECT_TRUE(implicitlyConvertible(intLit, t.get(k))) << t.get(k)->name();
    }
    EXPECT_FALSE(implicitlyConvertible(intLit, t.get(K::Time)));
    EXPECT_FALSE(implicitlyConvertible(intLit, t.get(K::String)));
    EXPECT_TRUE(implicitlyConvertible(t.get(K::RealLiteral), t.get(K::Real)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::RealLiteral), t.get(K::DInt)));

    EXPECT_TRUE(implicitlyConvertible(t.string(false, 10), t.string(false, 200)));
    EXPECT_TRUE(implicitlyConvertible(t.string(false, 200), t.string(false, 10))); // truncates at run time

    SubrangeType percent("INT (0..100)", t.get(K::Int), 0, 100);
    EXPECT_TRUE(implicitlyConvertible(&percent, t.get(K::Int)));
    EXPECT_TRUE(implicitlyConvertible(&percent, t.get(K::DInt)));
    EXPECT_FALSE(implicitlyConvertible(&percent, t.get(K::SInt)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Int), &percent)); // only range-checked constants
    EXPECT_TRUE(implicitlyConvertible(intLit, &percent));

    EnumType mode("Mode", t.get(K::Int));
    EnumType other("Other", t.get(K::Int));
    EXPECT_TRUE(implicitlyConvertible(&mode, &mode));
    EXPECT_FALSE(implicitlyConvertible(&mode, &other));
    EXPECT_FALSE(implicitlyConvertible(&mode, t.get(K::Int)));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Int), &mode));
    EXPECT_FALSE(implicitlyConvertible(intLit, &mode));

    EXPECT_TRUE(implicitlyConvertible(t.get(K::Null), t.ref(t.get(K::Int))));
    EXPECT_FALSE(implicitlyConvertible(t.get(K::Null), t.get(K::Int)));
    EXPECT_TRUE(implicitlyConvertible(t.ref(t.get(K::Int)), t.ref(t.get(K::Int))));
    EXPECT_FALSE(implicitlyConvertible(t.ref(t.get(K::Int)), t.ref(t.get(K::DInt))));

    for (K k : {K::Int, K::String, K::Time}) {
        EXPECT_TRUE(implicitlyConvertible(t.get(K::Error), t.get(k)));
        EXPECT_TRUE(implicitlyConvertible(t.get(k), t.get(K::Error)));
    }
}

TEST(SemaTypes, CommonTypeOfOperators) {
    TypeTable t;
    EXPECT_EQ(commonType(t, t.get(K::Int), t.get(K::DInt)), t.get(K::DInt));
    EXPECT_EQ(commonType(t, t.get(K::Int), t.get(K::UInt)), t.get(K::DInt));
    EXPECT_EQ(commonType(t, t.get(K::Int), t.get(K::Real)), t.get(K::Real));
    EXPECT_EQ(commonType(t, t.get(K::DInt), t.get(K::Real)), t.get(K::LReal));
    EXPECT_EQ(commonType(t, t.get(K::IntLiteral), t.get(K::SInt)), t.get(K::SInt));
    EXPECT_EQ(commonType(t, t.get(K::RealLiteral), t.get(K::Int)), t.get(K::Real));
    EXPECT_EQ(commonType(t, t.get(K::IntLiteral), t.get(K::IntLiteral)), t.get(K::IntLiteral));
    EXPECT_EQ(commonType(t, t.get(K::IntLiteral), t.get(K::RealLiteral)), t.get(K::RealLiteral));
    EXPECT_EQ(commonType(t, t.get(K::Byte), t.get(K::Word)), t.get(K::Word));
    EXPECT_EQ(commonType(t, t.get(K::Time), t.get(K::LTime)), t.get(K::LTime));
    EXPECT_EQ(commonType(t, t.get(K::LInt), t.get(K::LReal)), nullptr);
    EXPECT_EQ(commonType(t, t.get(K::Bool), t.get(K::Int)), nullptr);
    EXPECT_EQ(commonType(t, t.get(K::Error), t.get(K::Int)), t.get(K::Error));
}

// ---- layout of user types, from ST ---------------------------------------------------------

TEST(SemaTypes, StructLayoutUsesNaturalAlignment) {
    test::Analysis a(R"(
TYPE Rec : STRUCT
    flag : BOOL;
    value : DINT;
    small : INT;
    big : LREAL;
    name : STRING[5];
END_STRUCT; END_TYPE
)");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const auto* rec = static_cast<const StructType*>(stripAlias(a.type("Rec")));
    ASSERT_EQ(rec->kind(), K::Struct);
    ASSERT_EQ(rec->fields.size(), 5u);
    EXPECT_EQ(rec->fields[0].offset, 0u);
    EXPECT_EQ(rec->fields[1].offset, 4u);
    EXPECT_EQ(rec->fields[2].offset, 8u);
    EXPECT_EQ(rec->fields[3].offset, 16u);
    EXPECT_EQ(rec->fields[4].offset, 24u);
    EXPECT_EQ(rec->align, 8u);
    EXPECT_EQ(rec->size, 32u); // 24 + 6, rounded up to 8
}

TEST(SemaTypes, StructExtendsAndArraysOfStructs) {
    test::Analysis a(R"(
TYPE
    Base : STRUCT a : SINT; END_STRUCT;
    Point : STRUCT EXTENDS Base x : INT; y : INT; END_STRUCT;
    Line : ARRAY [0..9] OF Point;
END_TYPE
)");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const auto* p = static_cast<const StructType*>(stripAlias(a.type("Point")));
    ASSERT_EQ(p->fields.size(), 3u);
    EXPECT_EQ(p->fields[0].name, "a");
    EXPECT_EQ(p->fields[1].offset, 2u);
    EXPECT_EQ(p->size, 6u);
    const Type* line = stripAlias(a.type("Line"));
    ASSERT_EQ(line->kind(), K::Array);
    EXPECT_EQ(line->size, 60u);
    EXPECT_EQ(a.type("Line")->name(), "Line");
}

} // namespace
} // namespace takt::compiler
