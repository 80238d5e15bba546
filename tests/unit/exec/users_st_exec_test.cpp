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

} // namespace
} // namespace takt::compiler
