// Structured Text from third-party projects (OpenPLC programs, OSCAT, matiec, truST) that
// takt accepts beside CODESYS's own: compiled and run cycle by cycle, with the values worked
// out by hand from the documented rules (docs/language-notes.md, docs/dialects.md).
#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

// `F(EN := c)` is a formal call without further arguments: the inputs keep their initial
// values, EN FALSE skips it.
TEST(UsersSt, CallWithOnlyEnRunsWithTheInitialInputs) {
    Runner r(R"(
FUNCTION Scaled : INT
VAR_INPUT x : INT := 7; k : INT := 3; END_VAR
    Scaled := x * k;
END_FUNCTION
FUNCTION_BLOCK Count
VAR_INPUT step : INT := 2; END_VAR
VAR_OUTPUT n : INT; END_VAR
    n := n + step;
END_FUNCTION_BLOCK
PROGRAM Main
VAR c : BOOL; y : INT := -1; ok : BOOL; cnt : Count; END_VAR
    y := Scaled(EN := c, ENO => ok);
    cnt(EN := c);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), -1);
    EXPECT_FALSE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 0);
    r.set<bool>("Main.c", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), 21);
    EXPECT_TRUE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 2);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 4);
}

// SQRT, SIN … of an integer (W1016): converted to REAL when it is at most 16 bits wide and the
// context does not want LREAL, else to LREAL; the function computes in that type.
TEST(UsersSt, RealFunctionsOfIntegersComputeInRealOrLreal) {
    Runner r(R"(
PROGRAM Main
VAR
    i : INT := 2; n : INT := 16; d : DINT := 1000000; big : DINT := 2; l : LINT := 4;
    r16 : REAL; rInt : REAL; lInt : LREAL; rDint : LREAL; cosZero : REAL; lnOne : LREAL; sqL : LREAL;
END_VAR
    r16 := SQRT(n);
    rInt := SQRT(i);
    lInt := SQRT(i);
    rDint := SQRT(big);
    cosZero := COS(d - d);
    lnOne := LN(IN := d / d);
    sqL := SQRT(l);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<float>("Main.r16"), 4.0F);
    EXPECT_EQ(r.get<float>("Main.rInt"), 1.41421353816986083984375F); // sqrtf(2.0f)
    EXPECT_EQ(r.get<double>("Main.lInt"), 1.4142135623730951);        // sqrt(2.0): LREAL expected
    EXPECT_EQ(r.get<double>("Main.rDint"), 1.4142135623730951);       // a DINT computes in LREAL
    EXPECT_EQ(r.get<float>("Main.cosZero"), 1.0F);
    EXPECT_EQ(r.get<double>("Main.lnOne"), 0.0);
    EXPECT_EQ(r.get<double>("Main.sqL"), 2.0);
}

// MULTIME and DIVTIME are MUL_TIME and DIV_TIME.
TEST(UsersSt, MultimeAndDivtime) {
    Runner r(R"(
PROGRAM Main
VAR a : TIME; b : TIME; c : TIME; k : INT := 3; END_VAR
    a := MULTIME(T#100ms, k);
    b := DIVTIME(T#1s, 4);
    c := MULTIME(IN1 := T#1s, IN2 := 1.5);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.a"), 300'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.b"), 250'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.c"), 1'500'000'000);
}

const bytecode::IoBinding* binding(const Runner& r, std::string_view address) {
    for (const auto& b : r.module().io) {
        if (b.address == address) {
            return &b;
        }
    }
    ADD_FAILURE() << "no I/O binding " << address;
    return nullptr;
}

// `%IX1` is `%IX1.0`; `%IW0.0` and `%ID1.0` (OpenPLC's EtherCAT mapping) are `%IW0` and `%ID1`;
// a DWORD at `%ML50` takes 4 bytes from byte 400 (word addressing: LWORD 50 starts there).
TEST(UsersSt, ShortBitHierarchicalAndWiderAddresses) {
    Runner r(R"(
PROGRAM Main
VAR
    button AT %IX1 : BOOL;
    status AT %IW0.0 : UINT;
    position AT %ID1.0 : DINT;
    wide AT %ML50 : DWORD;
    seen : BOOL; st : UINT; pos : DINT; count : DWORD;
END_VAR
    seen := button;
    st := status;
    pos := position;
    count := wide;
    wide := count + 1;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    const auto* bit = binding(r, "%IX1.0");
    const auto* word = binding(r, "%IW0");
    const auto* dword = binding(r, "%ID1");
    const auto* lword = binding(r, "%ML50");
    ASSERT_TRUE(bit != nullptr && word != nullptr && dword != nullptr && lword != nullptr);
    EXPECT_EQ(bit->byteOffset, 1U);
    EXPECT_EQ(bit->bit, 0);
    EXPECT_EQ(bit->size, 0U);
    EXPECT_EQ(word->byteOffset, 0U);
    EXPECT_EQ(word->size, 2U);
    EXPECT_EQ(dword->byteOffset, 4U);
    EXPECT_EQ(dword->size, 4U);
    EXPECT_EQ(lword->byteOffset, 400U);
    EXPECT_EQ(lword->size, 4U); // the DWORD's own size, not the LWORD's
    r.setIo<bool>("%IX1.0", true);
    r.setIo<std::uint16_t>("%IW0", 513);
    r.setIo<std::int32_t>("%ID1", -7);
    r.setIo<std::uint32_t>("%ML50", 41);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.seen"));
    EXPECT_EQ(r.get<std::uint16_t>("Main.st"), 513);
    EXPECT_EQ(r.get<std::int32_t>("Main.pos"), -7);
    EXPECT_EQ(r.get<std::uint32_t>("Main.count"), 41U);
    EXPECT_EQ(r.io<std::uint32_t>("%ML50"), 42U);
}

} // namespace
} // namespace takt::compiler
