// Standard functions that run through natives or instruction sequences: strings, text
// conversions (dates, times and characters included), BCD, EXPT on integers, ATAN2, TIME scaled
// by numbers and REALs, ADD/SUB/MUL/DIV on times and dates, CONCAT_*/SPLIT_* and DAY_OF_WEEK,
// and formal arguments given in any order.
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

constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::int64_t kDay = 86'400 * kSec;

TEST(CodegenStdFn, DatesAndTimesToTextAndBack) {
    StRunner r(R"(
PROGRAM Main
  VAR
    d : DATE := D#2024-02-29; t : TOD := TOD#23:59:59.25; stamp : DT := DT#1969-12-31-23:59:59;
    ld : LDATE := LDATE#2000-03-01; lt : LTOD := LTOD#00:00:00.000000001; ldt1 : LDT := LDT#2261-12-31-23:59:59;
    sd : STRING; st : STRING; sdt : STRING; sld : STRING; slt : STRING; sldt : STRING; sto : STRING;
    wd : WSTRING; wdt : WSTRING;
    d2 : DATE; t2 : TOD; dt2 : DT; ld2 : LDATE; lt2 : LTOD; ldt2 : LDT; tm : TIME; ltm : LTIME;
    w2 : DATE; wt : TOD; short : STRING[4];
  END_VAR
  sd := DATE_TO_STRING(d);
  st := TOD_TO_STRING(t);
  sdt := DT_TO_STRING(stamp);
  sld := LDATE_TO_STRING(ld);
  slt := TO_STRING(lt);
  sldt := TO_STRING(ldt1);
  sto := TO_STRING(TIME_OF_DAY#08:00:00);
  wd := DATE_TO_WSTRING(d);
  wdt := TO_WSTRING(stamp);
  short := DATE_TO_STRING(d);
  d2 := STRING_TO_DATE(sd);
  t2 := STRING_TO_TOD(st);
  dt2 := STRING_TO_DT(sdt);
  ld2 := STRING_TO_LDATE(sld);
  lt2 := TO_LTOD(slt);
  ldt2 := TO_LDT(sldt);
  tm := STRING_TO_TIME('T#1d2h3m4s5ms');
  ltm := STRING_TO_LTIME('LTIME#-1.5s');
  w2 := WSTRING_TO_DATE(wd);
  wt := WSTRING_TO_TOD("12:00");
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(str(r, "Main.sd"), "D#2024-02-29");
    EXPECT_EQ(str(r, "Main.st"), "TOD#23:59:59.25");
    EXPECT_EQ(str(r, "Main.sdt"), "DT#1969-12-31-23:59:59");
    EXPECT_EQ(str(r, "Main.sld"), "LDATE#2000-03-01");
    EXPECT_EQ(str(r, "Main.slt"), "LTOD#00:00:00.000000001");
    EXPECT_EQ(str(r, "Main.sldt"), "LDT#2261-12-31-23:59:59");
    EXPECT_EQ(str(r, "Main.sto"), "TOD#08:00:00");
    EXPECT_EQ(wstr(r, "Main.wd"), u"D#2024-02-29");
    EXPECT_EQ(wstr(r, "Main.wdt"), u"DT#1969-12-31-23:59:59");
    EXPECT_EQ(str(r, "Main.short"), "D#20"); // truncated to the destination
    // Every text reads back as the value it came from.
    for (const char* name : {"d", "t", "ld", "lt"}) {
        EXPECT_EQ(r.get<std::int64_t>(std::string("Main.") + name + "2"),
                  r.get<std::int64_t>(std::string("Main.") + name))
            << name;
    }
    EXPECT_EQ(r.get<std::int64_t>("Main.dt2"), r.get<std::int64_t>("Main.stamp"));
    EXPECT_EQ(r.get<std::int64_t>("Main.ldt2"), r.get<std::int64_t>("Main.ldt1"));
    EXPECT_EQ(r.get<std::int64_t>("Main.tm"), kDay + (2 * 3600 + 3 * 60 + 4) * kSec + 5'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.ltm"), -1'500'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.w2"), r.get<std::int64_t>("Main.d"));
    EXPECT_EQ(r.get<std::int64_t>("Main.wt"), 12 * 3600 * kSec);
}

TEST(CodegenStdFn, MalformedDateTextGivesZero) {
    StRunner r(R"(
PROGRAM Main
  VAR
    text : STRING := 'x'; d : DATE := D#2000-01-01; t : TOD := TOD#01:00:00; dt1 : DT := DT#2000-01-01-00:00:00;
    tm : TIME := T#1s; n : DINT;
  END_VAR
  d := STRING_TO_DATE(text);
  t := STRING_TO_TOD(text);
  dt1 := STRING_TO_DT(text);
  tm := STRING_TO_TIME(text);
  n := n + 1;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    // Not a date, an impossible day, a leap day of a common year, a TOD past midnight, a DT with
    // a TOD prefix, a time without a unit: each gives 0 (like STRING_TO_INT) and the cycle goes on.
    for (const char* bad : {"hello", "D#2024-02-30", "2023-02-29", "TOD#24:00:00", "TOD#2024-01-01-00:00:00", "T#5"}) {
        std::array<char, 81> text{};
        std::memcpy(text.data(), bad, std::strlen(bad));
        r.set("Main.text", text);
        ASSERT_EQ(r.cycle(), vm::Trap::None) << bad;
        EXPECT_EQ(r.get<std::int64_t>("Main.d"), 0) << bad;
        EXPECT_EQ(r.get<std::int64_t>("Main.t"), 0) << bad;
        EXPECT_EQ(r.get<std::int64_t>("Main.dt1"), 0) << bad;
        EXPECT_EQ(r.get<std::int64_t>("Main.tm"), 0) << bad;
    }
    EXPECT_EQ(r.get<std::int32_t>("Main.n"), 6);
}

TEST(CodegenStdFn, ConcatAndSplitDates) {
    StRunner r(R"(
PROGRAM Main
  VAR
    d1 : DATE; d2 : DATE; t1 : TOD; lt1 : LTOD; dt1 : DT; ldt1 : LDT; dow : INT; dow2 : DINT;
    y : INT; mo : USINT; dd : DINT; h : UINT; mi : SINT; s : LINT; ms : INT; y2 : INT; ms2 : INT;
    yy : INT; mm : INT; ddd : INT; hh : INT; mmi : INT; ss : INT; mss : INT; lh : INT; ly : INT;
    badMonth : INT := 1; badMs : INT; t0 : TOD := TOD#01:00:00;
  END_VAR
  d1 := CONCAT_DATE(2024, 2, 29);
  d2 := CONCAT_DATE(DAY := 1, YEAR := 1900, MONTH := 3);
  t1 := CONCAT_TOD(23, 59, 59, 999);
  lt1 := CONCAT_LTOD(HOUR := 12, MINUTE := 0, SECOND := 1, MILLISECOND := 2);
  dt1 := CONCAT_DT(2000, 12, 31, 23, 59, 58, 7);
  ldt1 := CONCAT_LDT(1969, 12, 31, 0, 0, 0, 0);
  dow := DAY_OF_WEEK(D#2024-03-03);
  dow2 := DAY_OF_WEEK(d1);
  SPLIT_DATE(D#2024-02-29, y, mo, dd);
  SPLIT_TOD(IN := TOD#13:14:15.016789, MILLISECOND => ms, HOUR => h, SECOND => s, MINUTE => mi);
  SPLIT_DT(dt1, yy, mm, ddd, hh, mmi, ss, mss);
  SPLIT_LDT(IN := ldt1, YEAR => ly);
  SPLIT_LTOD(lt1, lh);
  SPLIT_DATE(IN := d2, YEAR => y2);
  d2 := CONCAT_DATE(2023, badMonth, 29);
  t0 := CONCAT_TOD(0, 0, 0, badMs);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.d1"), 19'782 * kDay);
    EXPECT_EQ(r.get<std::int64_t>("Main.t1"), 86'399 * kSec + 999'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.t0"), 0);
    EXPECT_EQ(r.get<std::int64_t>("Main.lt1"), (12 * 3600 + 1) * kSec + 2'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.dt1"), (978'307'200 - 2) * kSec + 7'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.ldt1"), -kDay);
    EXPECT_EQ(r.get<std::int16_t>("Main.dow"), 0); // 2024-03-03 is a Sunday
    EXPECT_EQ(r.get<std::int32_t>("Main.dow2"), 4);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), 2024);
    EXPECT_EQ(r.get<std::uint8_t>("Main.mo"), 2);
    EXPECT_EQ(r.get<std::int32_t>("Main.dd"), 29);
    EXPECT_EQ(r.get<std::uint16_t>("Main.h"), 13);
    EXPECT_EQ(r.get<std::int8_t>("Main.mi"), 14);
    EXPECT_EQ(r.get<std::int64_t>("Main.s"), 15);
    EXPECT_EQ(r.get<std::int16_t>("Main.ms"), 16);
    EXPECT_EQ(
        (std::array{r.get<std::int16_t>("Main.yy"), r.get<std::int16_t>("Main.mm"), r.get<std::int16_t>("Main.ddd"),
                    r.get<std::int16_t>("Main.hh"), r.get<std::int16_t>("Main.mmi"), r.get<std::int16_t>("Main.ss"),
                    r.get<std::int16_t>("Main.mss")}),
        (std::array<std::int16_t, 7>{2000, 12, 31, 23, 59, 58, 7}));
    EXPECT_EQ(r.get<std::int16_t>("Main.ly"), 1969);
    EXPECT_EQ(r.get<std::int16_t>("Main.lh"), 12);
    EXPECT_EQ(r.get<std::int16_t>("Main.y2"), 1900);
    // 2023-02-29 does not exist: a run-time fault (like an invalid BCD digit), not a made-up date.
    r.set<std::int16_t>("Main.badMonth", 2);
    EXPECT_EQ(r.cycle(), vm::Trap::InvalidArgument);
    r.set<std::int16_t>("Main.badMonth", 1);
    r.set<std::int16_t>("Main.badMs", 1000);
    EXPECT_EQ(r.cycle(), vm::Trap::InvalidArgument);
    r.set<std::int16_t>("Main.badMs", -1);
    EXPECT_EQ(r.cycle(), vm::Trap::InvalidArgument);
}

TEST(CodegenStdFn, SplitOutputsMustBeIntegerVariables) {
    const std::pair<const char*, const char*> cases[] = {
        {"SPLIT_DATE(d, y + 1, m, dd);", "needs a variable"},
        {"SPLIT_DATE(IN := d, YEAR => 5);", "needs a variable"},
        {"SPLIT_DATE(IN := d, YEAR := y);", "connect it with =>"},
        {"SPLIT_DATE(IN => d, YEAR => y);", "connect it with :="},
        {"SPLIT_DATE(IN := d, YEAR => r);", "no signature of SPLIT_DATE"},
        {"SPLIT_DATE(IN := d, NOT YEAR => y);", "NOT applies to BOOL outputs"},
        {"SPLIT_TOD(TOD#1:00:00, k, m, dd, y);", "CONSTANT"},
        {"LIMIT(IN => y, MN := 1, MX := 2);", "has no outputs"},
        {"y := CONCAT_DATE(2024, 1);", "CONCAT_DATE takes 3 arguments"},
    };
    for (const auto& [stmt, message] : cases) {
        StRunner r(std::string(R"(
PROGRAM Main
  VAR d : DATE; y : INT; m : INT; dd : INT; r : REAL; END_VAR
  VAR CONSTANT k : INT := 1; END_VAR
  )") + stmt + R"(
  r := r + 1.0; m := m + dd + y + k; d := d;
END_PROGRAM
)");
        EXPECT_FALSE(r.ok) << stmt;
        EXPECT_NE(r.errors().find(message), std::string::npos) << stmt << "\n" << r.errors();
    }
}

TEST(CodegenStdFn, FormalArgumentsBindByNameInAnyOrder) {
    StRunner r(R"(
PROGRAM Main
  VAR
    a : INT; b : INT; s : STRING := 'abcdef'; m : STRING; rep : STRING; sel : INT; x : DINT := 7;
  END_VAR
  a := LIMIT(MX := 3, IN := 5, MN := 0);
  b := LIMIT(IN := -5, MX := 3, MN := 0);
  m := MID(P := 2, L := 3, IN := s);
  rep := REPLACE(P := 2, IN2 := 'XY', L := 3, IN1 := s);
  sel := SEL(IN1 := 10, G := x > 5, IN0 := 20);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.a"), 3);
    EXPECT_EQ(r.get<std::int16_t>("Main.b"), 0);
    EXPECT_EQ(str(r, "Main.m"), "bcd");
    EXPECT_EQ(str(r, "Main.rep"), "aXYef");
    EXPECT_EQ(r.get<std::int16_t>("Main.sel"), 10);
}

TEST(CodegenStdFn, ArithmeticFunctionsOnTimesAndDates) {
    StRunner r(R"(
PROGRAM Main
  VAR
    t : TIME := T#1s; lt : LTIME := LTIME#2s; tod1 : TOD := TOD#23:00:00; stamp : DT := DT#2024-02-28-12:00:00;
    a : TIME; b : LTIME; c : TOD; e : DT; f : TIME; g : TIME; h : TIME; k : TIME; dd : TIME; zero : DINT;
    trapNow : BOOL;
  END_VAR
  a := ADD(t, T#500ms);
  b := SUB(lt, LTIME#3s);
  c := ADD(tod1, T#30m);
  e := ADD(stamp, T#1d);
  f := MUL(t, 3);
  g := DIV(t, 4);
  h := MUL(t, 0.5);
  k := SUB(TOD#12:00:00, TOD#11:00:00);
  dd := SUB(D#2024-03-01, D#2024-02-28);
  IF trapNow THEN f := DIV(t, zero); END_IF;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.a"), 1'500'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.b"), -kSec);
    EXPECT_EQ(r.get<std::int64_t>("Main.c"), (23 * 3600 + 1800) * kSec);
    EXPECT_EQ(r.get<std::int64_t>("Main.e") - r.get<std::int64_t>("Main.stamp"), kDay);
    EXPECT_EQ(r.get<std::int64_t>("Main.f"), 3 * kSec);
    EXPECT_EQ(r.get<std::int64_t>("Main.g"), 250'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.h"), 500'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.k"), 3600 * kSec);
    EXPECT_EQ(r.get<std::int64_t>("Main.dd"), 2 * kDay); // 2024 is a leap year
    r.set<bool>("Main.trapNow", true);
    EXPECT_EQ(r.cycle(), vm::Trap::DivByZero);
}

TEST(CodegenStdFn, CharactersToTextAndBack) {
    StRunner r(R"(
PROGRAM Main
  VAR
    c : CHAR := 'x'; lit : CHAR; typed : CHAR; wc : WCHAR := "$4E16"; empty : STRING;
    s1 : STRING; s2 : STRING; w1 : WSTRING; w2 : WSTRING; c2 : CHAR; c3 : CHAR; wc2 : WCHAR; wc3 : WCHAR;
    code : UINT; same : BOOL;
  END_VAR
  lit := 'q';
  typed := CHAR#'$41';
  same := c = 'x';
  s1 := CHAR_TO_STRING(c);
  s2 := WCHAR_TO_STRING(wc);
  w1 := TO_WSTRING(c);
  w2 := WCHAR_TO_WSTRING(wc);
  c2 := STRING_TO_CHAR('hello');
  c3 := STRING_TO_CHAR(empty);
  wc2 := WSTRING_TO_WCHAR("$00E9t");
  wc3 := STRING_TO_WCHAR('z');
  code := WCHAR_TO_UINT(wc);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<char>("Main.lit"), 'q');
    EXPECT_EQ(r.get<char>("Main.typed"), 'A');
    EXPECT_TRUE(r.get<bool>("Main.same"));
    EXPECT_EQ(str(r, "Main.s1"), "x");
    EXPECT_EQ(str(r, "Main.s2"), "?"); // above 16#FF: no STRING character
    EXPECT_EQ(wstr(r, "Main.w1"), u"x");
    EXPECT_EQ(wstr(r, "Main.w2"), u"\u4e16");
    EXPECT_EQ(r.get<char>("Main.c2"), 'h');
    EXPECT_EQ(r.get<char>("Main.c3"), '\0');
    EXPECT_EQ(r.get<char16_t>("Main.wc2"), u'\u00e9');
    EXPECT_EQ(r.get<char16_t>("Main.wc3"), u'z');
    EXPECT_EQ(r.get<std::uint16_t>("Main.code"), 0x4E16);
}

} // namespace
} // namespace takt::compiler
