// The standard FBs cycle by cycle on a virtual clock (edge cycles included) and the native
// standard functions, through CALL_FB / CALL_NATIVE as compiled code calls them.
#include "vm_test_util.h"

#include <array>
#include <limits>
#include <utility>

namespace takt::vm::test {
namespace {

using bytecode::Native;
using bytecode::ValueKind;

constexpr std::int64_t kMs = 1'000'000;

struct Field {
    const char* name;
    ValueKind kind;
    std::uint32_t size;
    std::uint32_t offset;
};

// A program whose body calls one native FB instance at this+64.
class FbHarness {
public:
    FbHarness(Native native, std::initializer_list<Field> fields) {
        bytecode::TypeDesc fb;
        fb.kind = ValueKind::FunctionBlock;
        fb.size = 64;
        for (const Field& f : fields) {
            bytecode::TypeDesc t;
            t.kind = f.kind;
            t.size = f.size;
            if (f.kind == ValueKind::FunctionBlock) { // nested R_TRIG edge memory: M at 0
                t.fields.push_back({"M", addType(ValueKind::Bool, 1), 0});
            }
            const auto ti = static_cast<std::uint32_t>(p.module.types.size());
            p.module.types.push_back(t);
            fb.fields.push_back({f.name, ti, f.offset});
            offsets_.emplace_back(f.name, f.offset);
        }
        const auto fbType = static_cast<std::uint32_t>(p.module.types.size());
        p.module.types.push_back(fb);
        bytecode::PouEntry pou;
        pou.kind = bytecode::PouKind::Native;
        pou.instanceType = fbType;
        pou.native = static_cast<std::uint32_t>(native);
        p.module.pous.push_back(pou);
        Asm a;
        a.op(Opcode::CALL_FB, {1, self(64), 0});
        a.op(Opcode::RET);
        p.setMain(a);
    }

    [[nodiscard]] std::uint32_t at(std::string_view name) const {
        for (const auto& [n, off] : offsets_) {
            if (n == name) {
                return 64 + off;
            }
        }
        ADD_FAILURE() << "no field " << name;
        return 0;
    }
    void setBool(std::string_view name, bool v) { p.set<std::uint8_t>(at(name), v ? 1 : 0); }
    [[nodiscard]] bool getBool(std::string_view name) const { return p.get<std::uint8_t>(at(name)) != 0; }
    template <typename T> void setInt(std::string_view name, T v) { p.set<T>(at(name), v); }
    template <typename T> [[nodiscard]] T getInt(std::string_view name) const { return p.get<T>(at(name)); }

    void cycle(std::int64_t nowMs, bool useSwitch) {
        p.nowNs = nowMs * kMs;
        ASSERT_EQ(p.run(useSwitch), Trap::None);
    }

    TestProgram p;

private:
    std::uint32_t addType(ValueKind kind, std::uint32_t size) {
        bytecode::TypeDesc t;
        t.kind = kind;
        t.size = size;
        p.module.types.push_back(t);
        return static_cast<std::uint32_t>(p.module.types.size() - 1);
    }
    std::vector<std::pair<std::string, std::uint32_t>> offsets_;
};

FbHarness timer(Native n) {
    return FbHarness(n, {{"IN", ValueKind::Bool, 1, 0},
                         {"PT", ValueKind::Time, 8, 8},
                         {"Q", ValueKind::Bool, 1, 16},
                         {"ET", ValueKind::Time, 8, 24},
                         {"StartTime", ValueKind::Time, 8, 32},
                         {"Running", ValueKind::Bool, 1, 40},
                         {"PrevIn", ValueKind::Bool, 1, 41}});
}

class NativeFbTest : public DispatchTest {};

struct TimerStep {
    std::int64_t nowMs;
    bool in;
    bool q;
    std::int64_t etMs;
};

void runTimer(FbHarness& h, std::initializer_list<TimerStep> steps, bool useSwitch) {
    for (const TimerStep& s : steps) {
        h.setBool("IN", s.in);
        h.cycle(s.nowMs, useSwitch);
        EXPECT_EQ(h.getBool("Q"), s.q) << "t=" << s.nowMs;
        EXPECT_EQ(h.getInt<std::int64_t>("ET"), s.etMs * kMs) << "t=" << s.nowMs;
    }
}

TEST_P(NativeFbTest, TonFollowsThePinnedSemantics) {
    FbHarness h = timer(Native::Ton);
    h.setInt<std::int64_t>("PT", 100 * kMs);
    runTimer(h,
             {{0, false, false, 0},
              {10, true, false, 0}, // rising cycle: ET = 0, start = now
              {60, true, false, 50},
              {109, true, false, 99},
              {110, true, true, 100},
              {500, true, true, 100},
              {510, false, false, 0},
              {520, true, false, 0}},
             useSwitch());
}

TEST_P(NativeFbTest, TonWithZeroPresetIsOnAtTheRisingCycle) {
    FbHarness h = timer(Native::Ton);
    runTimer(h, {{0, true, true, 0}}, useSwitch());
}

TEST_P(NativeFbTest, TofFollowsThePinnedSemantics) {
    FbHarness h = timer(Native::Tof);
    h.setInt<std::int64_t>("PT", 100 * kMs);
    runTimer(h,
             {{0, false, false, 0},
              {5, true, true, 0},
              {10, false, true, 0}, // falling edge: start = now
              {60, false, true, 50},
              {110, false, false, 100},
              {300, false, false, 100}, // ET stays PT
              {310, true, true, 0}},
             useSwitch());
}

TEST_P(NativeFbTest, TpFollowsThePinnedSemantics) {
    FbHarness h = timer(Native::Tp);
    h.setInt<std::int64_t>("PT", 100 * kMs);
    runTimer(h,
             {{0, true, true, 0},
              {50, false, true, 50},
              {60, true, true, 60}, // rising edge during the pulse is ignored
              {100, true, false, 100},
              {150, true, false, 100}, // ET = PT while IN stays TRUE
              {160, false, false, 0},
              {170, true, true, 0}},
             useSwitch());
}

TEST_P(NativeFbTest, EdgeDetectors) {
    FbHarness r(Native::RTrig,
                {{"CLK", ValueKind::Bool, 1, 0}, {"Q", ValueKind::Bool, 1, 1}, {"M", ValueKind::Bool, 1, 2}});
    const std::pair<bool, bool> rising[] = {{false, false}, {true, true}, {true, false}, {false, false}, {true, true}};
    for (const auto& [clk, q] : rising) {
        r.setBool("CLK", clk);
        r.cycle(0, useSwitch());
        EXPECT_EQ(r.getBool("Q"), q);
    }
    FbHarness f(Native::FTrig,
                {{"CLK", ValueKind::Bool, 1, 0}, {"Q", ValueKind::Bool, 1, 1}, {"M", ValueKind::Bool, 1, 2}});
    const std::pair<bool, bool> falling[] = {{false, true}, {false, false}, {true, false}, {false, true}};
    for (const auto& [clk, q] : falling) {
        f.setBool("CLK", clk);
        f.cycle(0, useSwitch());
        EXPECT_EQ(f.getBool("Q"), q);
    }
}

FbHarness counter(Native n, ValueKind cvKind, std::uint32_t cvSize) {
    return FbHarness(n, {{"CU", ValueKind::Bool, 1, 0},
                         {"CD", ValueKind::Bool, 1, 1},
                         {"R", ValueKind::Bool, 1, 2},
                         {"LD", ValueKind::Bool, 1, 3},
                         {"Q", ValueKind::Bool, 1, 4},
                         {"QU", ValueKind::Bool, 1, 5},
                         {"QD", ValueKind::Bool, 1, 6},
                         {"PV", cvKind, cvSize, 8},
                         {"CV", cvKind, cvSize, 16},
                         {"CU_T", ValueKind::FunctionBlock, 1, 24},
                         {"CD_T", ValueKind::FunctionBlock, 1, 25}});
}

TEST_P(NativeFbTest, CtuCountsRisingEdgesAndResetTakesPrecedence) {
    FbHarness h = counter(Native::Ctu, ValueKind::Int, 2);
    h.setInt<std::int16_t>("PV", 2);
    const struct {
        bool cu, r;
        std::int16_t cv;
        bool q;
    } steps[] = {{true, false, 1, false}, {true, false, 1, false}, {false, false, 1, false},
                 {true, false, 2, true},  {false, true, 0, false}, {true, true, 0, false}};
    for (const auto& s : steps) {
        h.setBool("CU", s.cu);
        h.setBool("R", s.r);
        h.cycle(0, useSwitch());
        EXPECT_EQ(h.getInt<std::int16_t>("CV"), s.cv);
        EXPECT_EQ(h.getBool("Q"), s.q);
    }
    h.setBool("R", false);
    h.setBool("CU", false);
    h.setInt<std::int16_t>("CV", 32767);
    h.cycle(0, useSwitch());
    h.setBool("CU", true);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::int16_t>("CV"), 32767); // not beyond the type's maximum
}

TEST_P(NativeFbTest, CtdLoadsAndCountsDownToTheTypeMinimum) {
    FbHarness h = counter(Native::Ctd, ValueKind::UDInt, 4);
    h.setInt<std::uint32_t>("PV", 1);
    h.setBool("LD", true);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::uint32_t>("CV"), 1u);
    EXPECT_FALSE(h.getBool("Q"));
    h.setBool("LD", false);
    for (int i = 0; i < 2; ++i) {
        h.setBool("CD", true);
        h.cycle(0, useSwitch());
        h.setBool("CD", false);
        h.cycle(0, useSwitch());
    }
    EXPECT_EQ(h.getInt<std::uint32_t>("CV"), 0u); // UDINT stops at 0
    EXPECT_TRUE(h.getBool("Q"));
}

TEST_P(NativeFbTest, CtudPrecedenceAndSimultaneousEdges) {
    FbHarness h = counter(Native::Ctud, ValueKind::DInt, 4);
    h.setInt<std::int32_t>("PV", 1);
    h.setBool("CU", true);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::int32_t>("CV"), 1);
    EXPECT_TRUE(h.getBool("QU"));
    h.setBool("CU", false);
    h.cycle(0, useSwitch());
    h.setBool("CU", true);
    h.setBool("CD", true);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::int32_t>("CV"), 1); // both edges cancel
    h.setBool("R", true);
    h.setBool("LD", true);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::int32_t>("CV"), 0); // R over LD
    EXPECT_TRUE(h.getBool("QD"));
    h.setBool("R", false);
    h.cycle(0, useSwitch());
    EXPECT_EQ(h.getInt<std::int32_t>("CV"), 1); // LD: CV := PV
}

// DINT counters read CV with its sign: Q/QD for a negative CV, and CV stops at -2147483648.
TEST_P(NativeFbTest, DintCountersAtNegativeValuesAndTheMinimum) {
    FbHarness d = counter(Native::Ctd, ValueKind::DInt, 4);
    d.setInt<std::int32_t>("CV", -2147483647);
    for (int i = 0; i < 3; ++i) {
        d.setBool("CD", true);
        d.cycle(0, useSwitch());
        EXPECT_EQ(d.getInt<std::int32_t>("CV"), std::numeric_limits<std::int32_t>::min()) << i;
        EXPECT_TRUE(d.getBool("Q")) << i;
        d.setBool("CD", false);
        d.cycle(0, useSwitch());
    }
    FbHarness u = counter(Native::Ctu, ValueKind::DInt, 4);
    u.setInt<std::int32_t>("PV", 1);
    u.setInt<std::int32_t>("CV", -5);
    u.cycle(0, useSwitch());
    EXPECT_FALSE(u.getBool("Q")); // -5 >= 1 is false
    FbHarness ud = counter(Native::Ctud, ValueKind::DInt, 4);
    ud.setInt<std::int32_t>("PV", 3);
    ud.setInt<std::int32_t>("CV", -1);
    ud.cycle(0, useSwitch());
    EXPECT_FALSE(ud.getBool("QU"));
    EXPECT_TRUE(ud.getBool("QD"));
}

TEST_P(NativeFbTest, Bistables) {
    FbHarness sr(Native::Sr,
                 {{"S1", ValueKind::Bool, 1, 0}, {"R", ValueKind::Bool, 1, 1}, {"Q1", ValueKind::Bool, 1, 2}});
    sr.setBool("S1", true);
    sr.setBool("R", true);
    sr.cycle(0, useSwitch());
    EXPECT_TRUE(sr.getBool("Q1")); // set dominant
    sr.setBool("S1", false);
    sr.setBool("R", false);
    sr.cycle(0, useSwitch());
    EXPECT_TRUE(sr.getBool("Q1"));
    FbHarness rs(Native::Rs,
                 {{"S", ValueKind::Bool, 1, 0}, {"R1", ValueKind::Bool, 1, 1}, {"Q1", ValueKind::Bool, 1, 2}});
    rs.setBool("S", true);
    rs.setBool("R1", true);
    rs.cycle(0, useSwitch());
    EXPECT_FALSE(rs.getBool("Q1")); // reset dominant
    rs.setBool("R1", false);
    rs.cycle(0, useSwitch());
    EXPECT_TRUE(rs.getBool("Q1"));
}

// RTC (OpenPLC): Q copies IN; IN FALSE gives CDT = the wall clock; IN's rising edge takes the
// offset PDT - now, kept while IN stays TRUE (a later PDT does not move the running clock).
TEST_P(NativeFbTest, RtcRunsFromThePresetOnTheRisingEdge) {
    FbHarness h(Native::Rtc, {{"IN", ValueKind::Bool, 1, 0},
                              {"PDT", ValueKind::Dt, 8, 8},
                              {"Q", ValueKind::Bool, 1, 16},
                              {"CDT", ValueKind::Dt, 8, 24},
                              {"PrevIn", ValueKind::Bool, 1, 32},
                              {"Offset", ValueKind::LTime, 8, 40}});
    constexpr std::int64_t kWall = 1'700'000'000'000'000'000;
    constexpr std::int64_t kPreset = 1'000'000'000'000'000'000;
    h.setInt<std::int64_t>("PDT", kPreset);
    h.p.wallNs = kWall;
    h.cycle(0, useSwitch());
    EXPECT_FALSE(h.getBool("Q"));
    EXPECT_EQ(h.getInt<std::int64_t>("CDT"), kWall);
    h.setBool("IN", true);
    h.p.wallNs = kWall + 5 * kMs;
    h.cycle(5, useSwitch());
    EXPECT_TRUE(h.getBool("Q"));
    EXPECT_EQ(h.getInt<std::int64_t>("CDT"), kPreset);
    h.setInt<std::int64_t>("PDT", 0); // ignored until the next rising edge
    h.p.wallNs = kWall + 25 * kMs;
    h.cycle(25, useSwitch());
    EXPECT_EQ(h.getInt<std::int64_t>("CDT"), kPreset + 20 * kMs);
    h.setBool("IN", false);
    h.p.wallNs = kWall + 30 * kMs;
    h.cycle(30, useSwitch());
    EXPECT_FALSE(h.getBool("Q"));
    EXPECT_EQ(h.getInt<std::int64_t>("CDT"), kWall + 30 * kMs);
    h.setBool("IN", true);
    h.cycle(30, useSwitch());
    EXPECT_EQ(h.getInt<std::int64_t>("CDT"), 0); // the new PDT
}

TAKT_VM_BOTH_DISPATCH_MODES(NativeFbTest);

// --- native functions: argument block in the frame (8-byte slots) -------------------------
class NativeFnTest : public ::testing::Test {
protected:
    static constexpr std::uint32_t kFrame = kConst + kGlobals;
    static constexpr std::uint32_t kResult = 200; // this-relative string result, capacity 10
    static constexpr std::uint32_t kCap = 10;

    TestProgram p;
    std::uint32_t nextString_ = 0;
    std::uint32_t cap_ = kCap; // capacity of the result string

    void stringSlot(int slot, const std::string& s) {
        p.setString(nextString_, s);
        p.setAbs<std::uint32_t>(kFrame + 8 * slot, kInst + nextString_);
        p.setAbs<std::uint32_t>(kFrame + 8 * slot + 4, 80);
        nextString_ += 64;
    }
    void intSlot(int slot, std::int64_t v) { p.setAbs<std::int64_t>(kFrame + 8 * slot, v); }
    Trap call(Native n) {
        p.setAbs<std::uint32_t>(kFrame, kInst + kResult);
        p.setAbs<std::uint32_t>(kFrame + 4, cap_);
        Asm a;
        a.op(Opcode::CALL_NATIVE, {static_cast<std::uint32_t>(n), fr(0)});
        a.op(Opcode::RET);
        p.setMain(a);
        return p.run(false);
    }
    std::string text(Native n) {
        EXPECT_EQ(call(n), Trap::None);
        return p.getString(kResult);
    }
    std::int64_t number(Native n) {
        EXPECT_EQ(call(n), Trap::None);
        std::int64_t v;
        std::memcpy(&v, p.image.data() + kFrame, 8);
        return v;
    }
    std::int64_t slot(int k) const {
        std::int64_t v;
        std::memcpy(&v, p.image.data() + kFrame + 8 * k, 8);
        return v;
    }
    void reset() {
        p = TestProgram{};
        nextString_ = 0;
    }
};

TEST_F(NativeFnTest, StringFunctionsUseOneBasedPositionsAndTruncate) {
    stringSlot(1, "hello");
    EXPECT_EQ(number(Native::Len), 5);
    reset();
    stringSlot(1, "hello");
    intSlot(2, 2);
    EXPECT_EQ(text(Native::Left), "he");
    EXPECT_EQ(text(Native::Right), "lo");
    reset();
    stringSlot(1, "hello");
    intSlot(2, 2);
    intSlot(3, 2);
    EXPECT_EQ(text(Native::Mid), "el");
    reset();
    stringSlot(1, "abcdefgh");
    stringSlot(2, "ijklmn");
    EXPECT_EQ(text(Native::Concat), "abcdefghij"); // truncated to the capacity (10)
    reset();
    stringSlot(1, "abc");
    stringSlot(2, "XY");
    intSlot(3, 1);
    EXPECT_EQ(text(Native::Insert), "aXYbc");
    reset();
    stringSlot(1, "abcdef");
    intSlot(2, 2);
    intSlot(3, 3);
    EXPECT_EQ(text(Native::Delete), "abef");
    reset();
    stringSlot(1, "abcdef");
    stringSlot(2, "XY");
    intSlot(3, 3);
    intSlot(4, 2);
    EXPECT_EQ(text(Native::Replace), "aXYef");
    reset();
    stringSlot(1, "abcabc");
    stringSlot(2, "ca");
    EXPECT_EQ(number(Native::Find), 3);
    reset();
    stringSlot(1, "abc");
    stringSlot(2, "x");
    EXPECT_EQ(number(Native::Find), 0);
}

// WSTRING: 2-byte code units with a 0 terminator; capacities and positions count code units.
class NativeWideFnTest : public NativeFnTest {
protected:
    void wideSlot(int slot, const std::u16string& s) {
        std::memcpy(p.image.data() + kInst + nextString_, s.c_str(), 2 * (s.size() + 1));
        p.setAbs<std::uint32_t>(kFrame + 8 * slot, kInst + nextString_);
        p.setAbs<std::uint32_t>(kFrame + 8 * slot + 4, 30);
        nextString_ += 64;
    }
    std::u16string wide(Native n) {
        EXPECT_EQ(call(n), Trap::None);
        std::u16string out;
        for (std::uint32_t at = kInst + kResult;; at += 2) {
            char16_t c;
            std::memcpy(&c, p.image.data() + at, 2);
            if (c == 0) {
                return out;
            }
            out.push_back(c);
        }
    }
};

TEST_F(NativeWideFnTest, WideStringFunctionsCountCodeUnits) {
    wideSlot(1, u"h\u00e9llo\u4e16");
    EXPECT_EQ(number(Native::WLen), 6);
    intSlot(2, 2);
    EXPECT_EQ(wide(Native::WLeft), u"h\u00e9");
    EXPECT_EQ(wide(Native::WRight), u"o\u4e16");
    intSlot(3, 2);
    EXPECT_EQ(wide(Native::WMid), u"\u00e9l");
    reset();
    wideSlot(1, u"abcdefgh");
    wideSlot(2, u"\u4e16jklmn");
    EXPECT_EQ(wide(Native::WConcat), u"abcdefgh\u4e16j"); // truncated to the capacity (10)
    reset();
    wideSlot(1, u"abc");
    wideSlot(2, u"XY");
    intSlot(3, 1);
    EXPECT_EQ(wide(Native::WInsert), u"aXYbc");
    reset();
    wideSlot(1, u"abcdef");
    intSlot(2, 2);
    intSlot(3, 3);
    EXPECT_EQ(wide(Native::WDelete), u"abef");
    reset();
    wideSlot(1, u"abcdef");
    wideSlot(2, u"XY");
    intSlot(3, 3);
    intSlot(4, 2);
    EXPECT_EQ(wide(Native::WReplace), u"aXYef");
    reset();
    wideSlot(1, u"ab\u4e16ab\u4e16");
    wideSlot(2, u"\u4e16a");
    EXPECT_EQ(number(Native::WFind), 3);
}

TEST_F(NativeWideFnTest, StringWidthConversions) {
    stringSlot(1, "caf\xe9");
    EXPECT_EQ(wide(Native::StringToWstring), u"caf\u00e9");
    reset();
    wideSlot(1, u"a\u00e9\u4e16");
    EXPECT_EQ(text(Native::WstringToString), "a\xe9?");
    reset();
    p.setAbs<std::uint32_t>(kFrame + 8, kInst + 1); // a WSTRING never starts at an odd offset
    EXPECT_EQ(call(Native::WLen), Trap::NullReference);
}

TEST_F(NativeFnTest, NullStringArgumentTraps) {
    p.setAbs<std::uint32_t>(kFrame + 8, 0);
    EXPECT_EQ(call(Native::Len), Trap::NullReference);
}

TEST_F(NativeFnTest, BcdExptAndTextConversions) {
    intSlot(1, 1234);
    EXPECT_EQ(number(Native::ToBcd), 0x1234);
    intSlot(1, 0x1234);
    EXPECT_EQ(number(Native::FromBcd), 1234);
    intSlot(1, 0x1A);
    EXPECT_EQ(call(Native::FromBcd), Trap::InvalidArgument);
    intSlot(1, 2);
    intSlot(2, 10);
    EXPECT_EQ(number(Native::ExptInt), 1024);
    intSlot(2, -1);
    EXPECT_EQ(number(Native::ExptInt), 0);
    intSlot(1, -42);
    EXPECT_EQ(text(Native::IntToString), "-42");
    intSlot(1, 1500 * kMs);
    EXPECT_EQ(text(Native::TimeToString), "T#1s500ms");
    intSlot(1, 1);
    EXPECT_EQ(text(Native::BoolToString), "TRUE");
    p.setAbs<double>(kFrame + 8, 0.1);
    EXPECT_EQ(text(Native::RealToString), "0.1");
    p.setAbs<float>(kFrame + 8, 0.1F); // a REAL: the shortest text of the float, not of its LREAL widening
    EXPECT_EQ(text(Native::Real32ToString), "0.1");
    p.setAbs<float>(kFrame + 8, -3e38F);
    EXPECT_EQ(text(Native::Real32ToString), "-3e+38");
    // Slot 2 names the target type (text_number_test.cpp covers the forms).
    reset();
    stringSlot(1, "16#FF");
    intSlot(2, static_cast<std::int64_t>(bytecode::TextNumber::Int));
    EXPECT_EQ(number(Native::StringToInt), 255);
    reset();
    stringSlot(1, "-1_000");
    intSlot(2, static_cast<std::int64_t>(bytecode::TextNumber::Int));
    EXPECT_EQ(number(Native::StringToInt), -1000);
    reset();
    stringSlot(1, "300");
    intSlot(2, static_cast<std::int64_t>(bytecode::TextNumber::Sint));
    EXPECT_EQ(number(Native::StringToInt), 0);
    reset();
    stringSlot(1, " 2.5 ");
    intSlot(2, static_cast<std::int64_t>(bytecode::TextNumber::Lreal));
    const std::int64_t bits = number(Native::StringToReal);
    double real = 0;
    std::memcpy(&real, &bits, sizeof real);
    EXPECT_EQ(real, 2.5);
}

// --- dates and times of day: int64 nanoseconds (DATE and DT since 1970-01-01) -----------------
constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::int64_t kDay = 86'400 * kSec;

class NativeDateTest : public NativeFnTest {
protected:
    NativeDateTest() { cap_ = 40; }
    // The text of `v` through a *_TO_STRING native; `isLong` selects the L-variant prefix.
    std::string show(Native n, std::int64_t v, bool isLong = false) {
        reset();
        cap_ = 40;
        intSlot(1, v);
        intSlot(2, isLong ? 1 : 0);
        return text(n);
    }
    std::int64_t parse(Native n, const std::string& s) {
        reset();
        stringSlot(1, s);
        return number(n);
    }
    Trap fields(Native n, std::initializer_list<std::int64_t> values) {
        reset();
        int k = 1;
        for (std::int64_t v : values) {
            intSlot(k++, v);
        }
        return call(n);
    }
};

TEST_F(NativeDateTest, DatesAndTimesOfDayAsText) {
    EXPECT_EQ(show(Native::DateToString, 0), "D#1970-01-01");
    EXPECT_EQ(show(Native::DateToString, 19'782 * kDay), "D#2024-02-29"); // a leap day
    EXPECT_EQ(show(Native::DateToString, -kDay), "D#1969-12-31");
    EXPECT_EQ(show(Native::DateToString, 19'782 * kDay, true), "LDATE#2024-02-29");
    EXPECT_EQ(show(Native::TodToString, (12 * 3600 + 30 * 60) * kSec), "TOD#12:30:00");
    EXPECT_EQ(show(Native::TodToString, 86'399 * kSec + 500'000'000), "TOD#23:59:59.5");
    EXPECT_EQ(show(Native::TodToString, 1), "TOD#00:00:00.000000001");
    EXPECT_EQ(show(Native::TodToString, kDay + kSec, true), "LTOD#00:00:01"); // taken modulo a day
    EXPECT_EQ(show(Native::TodToString, -kSec), "TOD#23:59:59");
    EXPECT_EQ(show(Native::DtToString, 951'782'400 * kSec + 3723 * kSec), "DT#2000-02-29-01:02:03");
    EXPECT_EQ(show(Native::DtToString, -kSec), "DT#1969-12-31-23:59:59");
    EXPECT_EQ(show(Native::DtToString, 0, true), "LDT#1970-01-01-00:00:00");
    cap_ = 4; // truncated to the destination like every string result
    intSlot(1, 0);
    intSlot(2, 0);
    EXPECT_EQ(text(Native::DateToString), "D#19");
}

TEST_F(NativeDateTest, TextToDatesAcceptsTheLiteralForms) {
    EXPECT_EQ(parse(Native::StringToDate, "D#2024-01-31"), 19'753 * kDay);
    EXPECT_EQ(parse(Native::StringToDate, " ldate#2024-01-31 "), 19'753 * kDay);
    EXPECT_EQ(parse(Native::StringToDate, "2024-02-29"), 19'782 * kDay);
    EXPECT_EQ(parse(Native::StringToDate, "1969-12-31"), -kDay);
    EXPECT_EQ(parse(Native::StringToTod, "TOD#23:59:59.999"), 86'399 * kSec + 999'000'000);
    EXPECT_EQ(parse(Native::StringToTod, "TIME_OF_DAY#1:02"), 3720 * kSec);
    EXPECT_EQ(parse(Native::StringToDt, "DT#2000-02-29-01:02:03"), 951'782'400 * kSec + 3723 * kSec);
    EXPECT_EQ(parse(Native::StringToDt, "LDATE_AND_TIME#1970-01-01-00:00:00.25"), kSec / 4);
    EXPECT_EQ(parse(Native::StringToTime, "T#1h30m"), 5400 * kSec);
    EXPECT_EQ(parse(Native::StringToTime, "ltime#-1.5s"), -3 * kSec / 2);
    EXPECT_EQ(parse(Native::StringToTime, "1d_2h"), kDay + 7200 * kSec);
    EXPECT_EQ(parse(Native::StringToTime, "T#-9223372036854775808ns"), std::numeric_limits<std::int64_t>::min());
    // Malformed or impossible text gives 0, like STRING_TO_INT.
    for (const char* bad : {"", "D#", "2023-02-29", "2024-13-01", "2024-00-10", "2024-04-31", "T#2024-01-01",
                            "2024-01-01x", "2024/01/01", "1677-01-01", "2262-01-01"}) {
        EXPECT_EQ(parse(Native::StringToDate, bad), 0) << bad;
    }
    for (const char* bad : {"24:00:00", "12:60", "12:30:60", "12:30:00.", "D#12:30", "12", "12:30:00 x"}) {
        EXPECT_EQ(parse(Native::StringToTod, bad), 0) << bad;
    }
    for (const char* bad : {"DT#2024-01-01", "2024-01-01 12:00:00", "2024-01-01-25:00:00"}) {
        EXPECT_EQ(parse(Native::StringToDt, bad), 0) << bad;
    }
    for (const char* bad : {"T#", "T#5", "T#5x", "TOD#5s", "T#9223372036854775808ns", "T#1.s", "T#_5s"}) {
        EXPECT_EQ(parse(Native::StringToTime, bad), 0) << bad;
    }
}

TEST_F(NativeDateTest, ConcatChecksEveryField) {
    ASSERT_EQ(fields(Native::ConcatDate, {2024, 2, 29}), Trap::None);
    EXPECT_EQ(slot(0), 19'782 * kDay);
    ASSERT_EQ(fields(Native::ConcatDate, {1900, 3, 1}), Trap::None); // 1900 is not a leap year
    EXPECT_EQ(slot(0), -25'508 * kDay);
    ASSERT_EQ(fields(Native::ConcatTod, {23, 59, 59, 999}), Trap::None);
    EXPECT_EQ(slot(0), 86'399 * kSec + 999'000'000);
    ASSERT_EQ(fields(Native::ConcatDt, {2000, 2, 29, 1, 2, 3, 4}), Trap::None);
    EXPECT_EQ(slot(0), 951'782'400 * kSec + 3723 * kSec + 4'000'000);
    EXPECT_EQ(fields(Native::ConcatDate, {2023, 2, 29}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDate, {1900, 2, 29}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDate, {2024, 0, 1}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDate, {2024, 1, -1}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDate, {2262, 1, 1}), Trap::InvalidArgument); // beyond int64 nanoseconds
    EXPECT_EQ(fields(Native::ConcatTod, {24, 0, 0, 0}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatTod, {0, 0, 0, 1000}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatTod, {0, -1, 0, 0}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDt, {2024, 4, 31, 0, 0, 0, 0}), Trap::InvalidArgument);
    EXPECT_EQ(fields(Native::ConcatDt, {2024, 4, 30, 0, 0, 60, 0}), Trap::InvalidArgument);
}

TEST_F(NativeDateTest, SplitAndDayOfWeek) {
    ASSERT_EQ(fields(Native::SplitDate, {19'782 * kDay + 5, 0, 0, 0}), Trap::None);
    EXPECT_EQ(slot(2), 2024);
    EXPECT_EQ(slot(3), 2);
    EXPECT_EQ(slot(4), 29);
    ASSERT_EQ(fields(Native::SplitDate, {-kDay, 0, 0, 0}), Trap::None);
    EXPECT_EQ(slot(2), 1969);
    EXPECT_EQ(slot(3), 12);
    EXPECT_EQ(slot(4), 31);
    ASSERT_EQ(fields(Native::SplitTod, {86'399 * kSec + 999'999'999, 0, 0, 0, 0}), Trap::None);
    EXPECT_EQ(slot(2), 23);
    EXPECT_EQ(slot(3), 59);
    EXPECT_EQ(slot(4), 59);
    EXPECT_EQ(slot(5), 999); // below a millisecond is dropped
    ASSERT_EQ(fields(Native::SplitDt, {951'782'400 * kSec + 3723 * kSec + 4'000'000, 0, 0, 0, 0, 0, 0, 0}), Trap::None);
    EXPECT_EQ((std::array{slot(2), slot(3), slot(4), slot(5), slot(6), slot(7), slot(8)}),
              (std::array<std::int64_t, 7>{2000, 2, 29, 1, 2, 3, 4}));
    const std::pair<std::int64_t, std::int64_t> weekdays[] = {
        {0, 4},              // 1970-01-01, a Thursday
        {-kDay, 3},          // 1969-12-31
        {19'723 * kDay, 1},  // 2024-01-01, a Monday
        {19'782 * kDay, 4},  // 2024-02-29
        {19'786 * kDay, 1},  // 2024-03-04
        {-25'508 * kDay, 4}, // 1900-03-01
    };
    for (const auto& [date, weekday] : weekdays) {
        ASSERT_EQ(fields(Native::DayOfWeek, {date}), Trap::None);
        EXPECT_EQ(slot(0), weekday) << date / kDay;
    }
}

} // namespace
} // namespace takt::vm::test
