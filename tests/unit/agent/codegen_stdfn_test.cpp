// Standard functions that run through natives or instruction sequences: strings, text
// conversions, BCD, EXPT on integers, ATAN2, TIME scaled by numbers and REALs, CONCAT_DATE_TOD.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using testing::StRunner;

std::string str(const StRunner& r, std::string_view path) {
    const auto bytes = r.get<std::array<char, 32>>(path);
    return std::string(bytes.data(), strnlen(bytes.data(), bytes.size()));
}

TEST(CodegenStdFn, StringFunctions) {
    StRunner r(R"(
PROGRAM Main
  VAR
    s : STRING := 'Hello World'; n : INT; p : INT; none : INT;
    l : STRING[31]; rt : STRING[31]; m : STRING[31]; c : STRING[31]; c3 : STRING[31];
    ins : STRING[31]; del : STRING[31]; rep : STRING[31]; shortS : STRING[4];
    gt1 : BOOL; gt2 : BOOL; eq1 : BOOL; ge1 : BOOL; ne1 : BOOL;
  END_VAR
  gt1 := GT('b', 'a');
  gt2 := GT('c', 'b', 'b');
  eq1 := EQ(s, 'Hello World');
  ge1 := GE(TRUE, FALSE);
  ne1 := NE("x", "y");
  n := LEN(s);
  p := FIND(s, 'World');
  none := FIND(s, 'xyz');
  l := LEFT(s, 5);
  rt := RIGHT(IN := s, L := 5);
  m := MID(s, 3, 7);
  c := CONCAT('ab', 'cd');
  c3 := CONCAT('a', 'b', 'c');
  ins := INSERT('abef', 'cd', 2);
  del := DELETE('abcdef', 2, 3);
  rep := REPLACE('abcdef', 'XY', 3, 2);
  shortS := CONCAT(s, '!');
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.n"), 11);
    EXPECT_EQ(r.get<std::int16_t>("Main.p"), 7);
    EXPECT_EQ(r.get<std::int16_t>("Main.none"), 0);
    EXPECT_EQ(str(r, "Main.l"), "Hello");
    EXPECT_EQ(str(r, "Main.rt"), "World");
    EXPECT_EQ(str(r, "Main.m"), "Wor"); // MID(IN, L, P): 3 characters from position 7
    EXPECT_EQ(str(r, "Main.c"), "abcd");
    EXPECT_EQ(str(r, "Main.c3"), "abc");
    EXPECT_EQ(str(r, "Main.ins"), "abcdef");
    EXPECT_EQ(str(r, "Main.del"), "abef"); // DELETE(IN, L, P): 2 characters from position 3
    EXPECT_EQ(str(r, "Main.rep"), "aXYef");
    EXPECT_EQ(str(r, "Main.shortS"), "Hell");
    EXPECT_TRUE(r.get<bool>("Main.gt1"));
    EXPECT_FALSE(r.get<bool>("Main.gt2")); // 'b' > 'b' is false
    EXPECT_TRUE(r.get<bool>("Main.eq1"));
    EXPECT_TRUE(r.get<bool>("Main.ge1"));
    EXPECT_TRUE(r.get<bool>("Main.ne1"));
}

std::u16string wstr(const StRunner& r, std::string_view path) {
    const auto units = r.get<std::array<char16_t, 32>>(path);
    std::u16string out;
    for (char16_t c : units) {
        if (c == 0) {
            break;
        }
        out.push_back(c);
    }
    return out;
}

TEST(CodegenStdFn, WideStringFunctionsAndConversions) {
    StRunner r(R"(
PROGRAM Main
  VAR
    w : WSTRING := "Grüße"; n : INT; p : INT; l : WSTRING[31]; c : WSTRING[31]; rep : WSTRING[31];
    num : WSTRING[31]; back : DINT; narrowS : STRING[31]; wideS : WSTRING[31];
  END_VAR
  n := LEN(w);
  p := FIND(w, "ß");
  l := LEFT(w, 3);
  c := CONCAT(w, "!", "x");
  rep := REPLACE(w, "ss", 1, 4);
  num := DINT_TO_WSTRING(-1234);
  back := WSTRING_TO_DINT(num) * 2;
  narrowS := WSTRING_TO_STRING(w);
  wideS := STRING_TO_WSTRING('abc');
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.n"), 5);
    EXPECT_EQ(r.get<std::int16_t>("Main.p"), 4);
    EXPECT_EQ(wstr(r, "Main.l"), u"Grü");
    EXPECT_EQ(wstr(r, "Main.c"), u"Grüße!x");
    EXPECT_EQ(wstr(r, "Main.rep"), u"Grüsse");
    EXPECT_EQ(wstr(r, "Main.num"), u"-1234");
    EXPECT_EQ(r.get<std::int32_t>("Main.back"), -2468);
    EXPECT_EQ(str(r, "Main.narrowS"), "Gr\xfc\xdf"
                                      "e");
    EXPECT_EQ(wstr(r, "Main.wideS"), u"abc");
}

TEST(CodegenStdFn, DateAndTimeOfDayFromDateAndTime) {
    StRunner r(R"(
PROGRAM Main
  VAR stamp : DT := DT#2024-01-15-12:30:00; d : DATE; t : TOD; back : DT; END_VAR
  d := DT_TO_DATE(stamp);
  t := DT_TO_TOD(stamp);
  back := CONCAT_DATE_TOD(d, t);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    constexpr std::int64_t kS = 1'000'000'000;
    EXPECT_EQ(r.get<std::int64_t>("Main.d"), 19737LL * 86400 * kS);
    EXPECT_EQ(r.get<std::int64_t>("Main.t"), (12LL * 3600 + 30 * 60) * kS);
    EXPECT_EQ(r.get<std::int64_t>("Main.back"), r.get<std::int64_t>("Main.stamp"));
}

TEST(CodegenStdFn, TextConversions) {
    StRunner r(R"(
PROGRAM Main
  VAR
    a : STRING; b : STRING; c : STRING; d : STRING; e : STRING;
    i : DINT; x : LREAL; k : INT; u : UDINT := 4000000000;
  END_VAR
  a := INT_TO_STRING(-42);
  b := UDINT_TO_STRING(u);
  c := BOOL_TO_STRING(TRUE);
  d := TIME_TO_STRING(T#1m30s);
  e := REAL_TO_STRING(REAL#1.5);
  i := STRING_TO_DINT('16#FF');
  x := STRING_TO_LREAL('2.25');
  k := STRING_TO_INT('-7');
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(str(r, "Main.a"), "-42");
    EXPECT_EQ(str(r, "Main.b"), "4000000000");
    EXPECT_EQ(str(r, "Main.c"), "TRUE");
    EXPECT_EQ(str(r, "Main.d"), "T#1m30s");
    EXPECT_EQ(str(r, "Main.e"), "1.5");
    EXPECT_EQ(r.get<std::int32_t>("Main.i"), 255);
    EXPECT_DOUBLE_EQ(r.get<double>("Main.x"), 2.25);
    EXPECT_EQ(r.get<std::int16_t>("Main.k"), -7);
}

TEST(CodegenStdFn, BcdExptAtan2) {
    StRunner r(R"(
PROGRAM Main
  VAR
    w : WORD; back : INT; bb : BYTE; ub : USINT; e1 : DINT; e2 : INT; e3 : LREAL; ang : LREAL;
    bad : WORD := 16#12A4; badOut : INT; neg : INT := -5; negOut : WORD; trapBad : BOOL; trapNeg : BOOL;
  END_VAR
  w := INT_TO_BCD(1234);
  back := BCD_TO_INT(WORD#16#0987);
  bb := USINT_TO_BCD_BYTE(42);
  ub := BYTE_BCD_TO_USINT(BYTE#16#99);
  e1 := EXPT(2, 10);
  e2 := EXPT(INT#3, INT#3);
  e3 := EXPT(2.0, 0.5);
  ang := ATAN2(1.0, 1.0);
  IF trapBad THEN badOut := BCD_TO_INT(bad); END_IF;
  IF trapNeg THEN negOut := INT_TO_BCD(neg); END_IF;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::uint16_t>("Main.w"), 0x1234);
    EXPECT_EQ(r.get<std::int16_t>("Main.back"), 987);
    EXPECT_EQ(r.get<std::uint8_t>("Main.bb"), 0x42);
    EXPECT_EQ(r.get<std::uint8_t>("Main.ub"), 99);
    EXPECT_EQ(r.get<std::int32_t>("Main.e1"), 1024);
    EXPECT_EQ(r.get<std::int16_t>("Main.e2"), 27);
    EXPECT_NEAR(r.get<double>("Main.e3"), 1.41421356, 1e-6);
    EXPECT_NEAR(r.get<double>("Main.ang"), 0.78539816, 1e-6);
    r.set<bool>("Main.trapBad", true);
    EXPECT_EQ(r.cycle(), vm::Trap::InvalidArgument); // an invalid BCD digit (16#A) is a run-time fault
    r.set<bool>("Main.trapBad", false);
    r.set<bool>("Main.trapNeg", true);
    EXPECT_EQ(r.cycle(), vm::Trap::InvalidArgument); // negative values have no BCD form
}

TEST(CodegenStdFn, TimeScalingAndDates) {
    StRunner r(R"(
PROGRAM Main
  VAR
    t1 : TIME; t2 : TIME; t3 : TIME; t4 : TIME; t5 : TIME; t6 : TIME; f : REAL := 0.5; zero : LREAL;
    dt1 : DT; trapNow : BOOL;
  END_VAR
  t1 := T#2s * 1.5;
  t2 := T#3s / 4.0;
  t3 := 0.25 * T#1s;
  t4 := MUL_TIME(T#1s, f);
  t5 := DIV_TIME(T#10s, 4);
  t6 := MUL_TIME(T#1s, 3);
  dt1 := CONCAT_DATE_TOD(D#2024-01-15, TOD#12:30:00);
  IF trapNow THEN t1 := T#1s / zero; END_IF;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.t1"), 3'000'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t2"), 750'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t3"), 250'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t4"), 500'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t5"), 2'500'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t6"), 3'000'000'000);
    // 2024-01-15 is day 19737 after 1970-01-01.
    EXPECT_EQ(r.get<std::int64_t>("Main.dt1"), (19737LL * 86400 + 12 * 3600 + 30 * 60) * 1'000'000'000LL);
    r.set<bool>("Main.trapNow", true);
    EXPECT_EQ(r.cycle(), vm::Trap::DivByZero);
}

} // namespace
} // namespace takt::compiler
