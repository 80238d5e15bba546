// Online change by meaning (transfer.h): one test per rule of what a changed type keeps,
// converts and re-initialises, on hand-built modules laid out as the code generator lays them out.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "module_builder.h"
#include "takt/engine/retain.h"
#include "takt/engine/transfer.h"

namespace takt::engine {
namespace {

using bytecode::TypeDesc;
using bytecode::ValueKind;
using testing::ModuleBuilder;
using testing::peek;
using testing::poke;

// An ENUM over INT with the values 0, 1, 2, ... in the order given, as the compiler signs it.
std::uint32_t enumType(ModuleBuilder& b, const std::string& name, const std::vector<std::string>& values,
                       std::uint32_t base) {
    TypeDesc t;
    t.kind = ValueKind::Enum;
    t.name = name;
    t.size = 2;
    t.align = 2;
    t.element = base;
    t.signature = "ENUM " + name + "(INT){";
    for (std::size_t i = 0; i < values.size(); ++i) {
        t.enumValues.push_back({values[i], static_cast<std::int64_t>(i)});
        t.signature += values[i] + "=" + std::to_string(i) + ";";
    }
    t.signature += "}";
    return b.add(std::move(t));
}

std::uint32_t stringType(ModuleBuilder& b, ValueKind kind, std::uint32_t length) {
    TypeDesc t;
    t.kind = kind;
    const std::uint32_t unit = kind == ValueKind::WString ? 2 : 1;
    t.name = std::string(kind == ValueKind::WString ? "WSTRING[" : "STRING[") + std::to_string(length) + "]";
    t.size = unit * (length + 1);
    t.align = unit;
    t.stringLength = length;
    return b.add(std::move(t));
}

// Two versions of a program; the old image's values are set by the test, the plan computed and
// applied to a cold-initialised new image, the report settled as the runtime does.
struct Change {
    ModuleBuilder v1, v2;
    std::vector<std::uint8_t> oldImage, newImage;
    TransferPlan plan;

    void prepareOld() { oldImage = v1.m.initImage; }
    void apply() {
        plan = computeTransferPlan(v1.m, v2.m);
        newImage = v2.m.initImage;
        applyTransferPlan(plan, oldImage.data(), newImage.data());
        settleTransferReport(plan, plan.report);
    }
    const TransferEntry& entry(const std::string& path) const {
        for (const TransferEntry& e : plan.report.entries) {
            if (e.path == path) {
                return e;
            }
        }
        static const TransferEntry none = transferEntry("<none>", TransferOutcome::Kept);
        ADD_FAILURE() << "no report entry for " << path;
        return none;
    }
};

TEST(TransferRules, EnumKeepsItsValueByNameWhenTheTypeGainsOrReordersValues) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t s1 = enumType(c.v1, "State", {"Idle", "Fill", "Heat", "Drain"}, i1);
    const std::uint32_t state1 = c.v1.global("state", s1);
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    // Gains Hold before Heat and swaps Drain and Fill: every value's number changes but Idle's.
    const std::uint32_t s2 = enumType(c.v2, "State", {"Idle", "Drain", "Hold", "Heat", "Fill"}, i2);
    const std::uint32_t state2 = c.v2.global("state", s2);
    c.prepareOld();
    poke<std::int16_t>(c.oldImage.data(), state1, 2); // Heat
    c.apply();
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), state2), 3); // Heat in the new numbering
    const TransferEntry& e = c.entry("state");
    EXPECT_EQ(e.outcome, TransferOutcome::Converted);
    EXPECT_EQ(e.fromType, "State(Idle, Fill, Heat, Drain)");
    EXPECT_EQ(e.toType, "State(Idle, Drain, Hold, Heat, Fill)");
    EXPECT_TRUE(e.lostValues.empty());
    EXPECT_FALSE(c.plan.report.losesState());
}

TEST(TransferRules, EnumValueThatNoLongerExistsGetsTheInitialValueAndIsReported) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t s1 = enumType(c.v1, "State", {"Idle", "Hold", "Heat"}, i1);
    const std::uint32_t a1 = c.v1.global("a", s1);
    const std::uint32_t b1 = c.v1.global("b", s1);
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t s2 = enumType(c.v2, "State", {"Idle", "Heat"}, i2);
    const std::uint32_t a2 = c.v2.global("a", s2);
    const std::uint32_t b2 = c.v2.global("b", s2);
    c.v2.init<std::int16_t>(a2, 1); // a's initial value: Heat
    c.v2.init<std::int16_t>(b2, 1);
    c.prepareOld();
    poke<std::int16_t>(c.oldImage.data(), a1, 1); // Hold: gone
    poke<std::int16_t>(c.oldImage.data(), b1, 0); // Idle: kept
    const TransferPlan preview = computeTransferPlan(c.v1.m, c.v2.m);
    EXPECT_TRUE(preview.report.losesState()) << "the preview cannot know which value a will hold";
    c.apply();
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), a2), 1) << "the initial value";
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), b2), 0);
    const TransferEntry& a = c.entry("a");
    EXPECT_EQ(a.outcome, TransferOutcome::Reinitialised);
    EXPECT_NE(a.reason.find("no longer exists (Hold)"), std::string::npos) << a.reason;
    EXPECT_EQ(c.entry("b").outcome, TransferOutcome::Converted);
    EXPECT_EQ(c.plan.report.reinitialised, 1u);
}

TEST(TransferRules, StructMembersAreKeptByNameRecursively) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t d1 = c.v1.elementary(ValueKind::DInt, "DINT", 4);
    const std::uint32_t inner1 = c.v1.composite(ValueKind::Struct, "Inner", {{"x", i1}, {"y", i1}}, "STRUCT Inner{1}");
    const std::uint32_t st1 = c.v1.composite(
        ValueKind::Struct, "Recipe", {{"temp", i1}, {"time", d1}, {"gone", i1}, {"in", inner1}}, "STRUCT Recipe{1}");
    const std::uint32_t r1 = c.v1.global("recipe", st1);
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t d2 = c.v2.elementary(ValueKind::DInt, "DINT", 4);
    const std::uint32_t b2 = c.v2.elementary(ValueKind::Bool, "BOOL", 1);
    const std::uint32_t inner2 =
        c.v2.composite(ValueKind::Struct, "Inner", {{"z", b2}, {"Y", i2}, {"x", d2}}, "STRUCT Inner{2}");
    const std::uint32_t st2 = c.v2.composite(
        ValueKind::Struct, "Recipe", {{"in", inner2}, {"fresh", b2}, {"TIME", d2}, {"temp", d2}}, "STRUCT Recipe{2}");
    const std::uint32_t r2 = c.v2.global("recipe", st2);
    c.prepareOld();
    poke<std::int16_t>(c.oldImage.data(), r1 + 0, -70);    // temp
    poke<std::int32_t>(c.oldImage.data(), r1 + 8, 123456); // time
    poke<std::int16_t>(c.oldImage.data(), r1 + 24 + 0, 5); // in.x
    poke<std::int16_t>(c.oldImage.data(), r1 + 24 + 8, 6); // in.y
    c.apply();
    EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), r2 + 40), -70);    // temp, INT -> DINT
    EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), r2 + 32), 123456); // TIME (case-insensitive)
    EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), r2 + 0 + 16), 5);  // in.x, INT -> DINT
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), r2 + 0 + 8), 6);   // in.Y
    EXPECT_EQ(c.entry("recipe.temp").outcome, TransferOutcome::Converted);
    EXPECT_EQ(c.entry("recipe.TIME").outcome, TransferOutcome::Kept);
    EXPECT_EQ(c.entry("recipe.gone").outcome, TransferOutcome::Dropped);
    EXPECT_EQ(c.entry("recipe.fresh").outcome, TransferOutcome::Added);
    EXPECT_EQ(c.entry("recipe.in.z").outcome, TransferOutcome::Added);
    EXPECT_EQ(c.entry("recipe.in.Y").outcome, TransferOutcome::Kept);
}

TEST(TransferRules, ArraysKeepTheOverlappingIndexRangePerDimension) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t a1 = c.v1.global("a", c.v1.array(i1, {0, 4}));       // [0..4] OF INT
    const std::uint32_t m1 = c.v1.global("m", c.v1.array(i1, {0, 2, 0, 2})); // [0..2, 0..2]
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t d2 = c.v2.elementary(ValueKind::DInt, "DINT", 4);
    const std::uint32_t a2 = c.v2.global("a", c.v2.array(d2, {2, 9}));       // [2..9] OF DINT
    const std::uint32_t m2 = c.v2.global("m", c.v2.array(i2, {1, 3, 0, 1})); // [1..3, 0..1]
    c.prepareOld();
    for (std::int16_t i = 0; i < 5; ++i) {
        poke<std::int16_t>(c.oldImage.data(), a1 + 2 * i, static_cast<std::int16_t>(100 + i));
    }
    for (std::int16_t i = 0; i < 9; ++i) { // m[r, k] = 10 * r + k
        poke<std::int16_t>(c.oldImage.data(), m1 + 2 * i, static_cast<std::int16_t>(10 * (i / 3) + i % 3));
    }
    c.apply();
    for (int i = 2; i <= 4; ++i) {
        EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), a2 + 4 * (i - 2)), 100 + i) << "a[" << i << "]";
    }
    EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), a2 + 4 * 3), 0) << "a[5] is new: initial value";
    // m[1..2, 0..1] kept; m[3, *] new.
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), m2 + 2 * 0), 10); // m[1,0]
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), m2 + 2 * 1), 11); // m[1,1]
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), m2 + 2 * 2), 20); // m[2,0]
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), m2 + 2 * 3), 21); // m[2,1]
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), m2 + 2 * 4), 0);  // m[3,0]
    // Elements 0 and 1 of `a` and m[0, *], m[*, 2] are gone: state lost, reported.
    EXPECT_EQ(c.entry("a").outcome, TransferOutcome::Reinitialised);
    EXPECT_NE(c.entry("a").reason.find("[0..4] -> [2..9]"), std::string::npos) << c.entry("a").reason;
    EXPECT_NE(c.entry("a").reason.find("INT -> DINT"), std::string::npos) << c.entry("a").reason;
}

TEST(TransferRules, ArrayThatGrowsIsConvertedWithoutLoss) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t a1 = c.v1.global("a", c.v1.array(i1, {1, 3}));
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t a2 = c.v2.global("a", c.v2.array(i2, {0, 10}));
    c.prepareOld();
    poke<std::int16_t>(c.oldImage.data(), a1 + 4, 33); // a[3]
    c.apply();
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), a2 + 6), 33);
    EXPECT_EQ(c.entry("a").outcome, TransferOutcome::Converted);
    EXPECT_FALSE(c.plan.report.losesState());
}

// Every value of the old type exists in the new one: converted.
TEST(TransferRules, ElementaryWideningConverts) {
    Change c;
    struct Case {
        const char* name;
        ValueKind from;
        std::uint32_t fromSize;
        ValueKind to;
        std::uint32_t toSize;
    };
    const Case cases[] = {
        {"INT", ValueKind::Int, 2, ValueKind::DInt, 4},     {"SINT", ValueKind::SInt, 1, ValueKind::LInt, 8},
        {"UINT", ValueKind::UInt, 2, ValueKind::UDInt, 4},  {"USINT", ValueKind::USInt, 1, ValueKind::Int, 2},
        {"UDINT", ValueKind::UDInt, 4, ValueKind::LInt, 8}, {"BYTE", ValueKind::Byte, 1, ValueKind::Word, 2}};
    std::vector<std::uint32_t> from, to;
    for (const Case& k : cases) {
        from.push_back(c.v1.global(std::string("v_") + k.name, c.v1.elementary(k.from, k.name, k.fromSize)));
        to.push_back(c.v2.global(std::string("v_") + k.name, c.v2.elementary(k.to, "TO", k.toSize)));
    }
    const std::uint32_t r1 = c.v1.global("r", c.v1.elementary(ValueKind::Real, "REAL", 4));
    const std::uint32_t r2 = c.v2.global("r", c.v2.elementary(ValueKind::LReal, "LREAL", 8));
    const std::uint32_t s1 = c.v1.global("s", stringType(c.v1, ValueKind::String, 20));
    const std::uint32_t s2 = c.v2.global("s", stringType(c.v2, ValueKind::String, 40));
    const std::uint32_t w1 = c.v1.global("w", stringType(c.v1, ValueKind::WString, 5));
    const std::uint32_t w2 = c.v2.global("w", stringType(c.v2, ValueKind::WString, 10));
    std::memcpy(c.v2.m.initImage.data() + s2, "initial value of s2!!!!!", 24); // must not show through
    c.prepareOld();
    poke<std::int16_t>(c.oldImage.data(), from[0], -1234);
    poke<std::int8_t>(c.oldImage.data(), from[1], -5);
    poke<std::uint16_t>(c.oldImage.data(), from[2], 65000);
    poke<std::uint8_t>(c.oldImage.data(), from[3], 250);
    poke<std::uint32_t>(c.oldImage.data(), from[4], 4000000000u);
    poke<std::uint8_t>(c.oldImage.data(), from[5], 0xA5);
    poke<float>(c.oldImage.data(), r1, 1.5F);
    std::memcpy(c.oldImage.data() + s1, "Batch 7", 8);
    const char16_t wide[] = u"Ofen";
    std::memcpy(c.oldImage.data() + w1, wide, sizeof wide);
    c.apply();
    EXPECT_EQ(peek<std::int32_t>(c.newImage.data(), to[0]), -1234);
    EXPECT_EQ(peek<std::int64_t>(c.newImage.data(), to[1]), -5);
    EXPECT_EQ(peek<std::uint32_t>(c.newImage.data(), to[2]), 65000u);
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), to[3]), 250);
    EXPECT_EQ(peek<std::int64_t>(c.newImage.data(), to[4]), 4000000000LL);
    EXPECT_EQ(peek<std::uint16_t>(c.newImage.data(), to[5]), 0xA5u);
    EXPECT_EQ(peek<double>(c.newImage.data(), r2), 1.5);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.newImage.data() + s2)), "Batch 7");
    for (std::uint32_t i = 8; i < 41; ++i) {
        EXPECT_EQ(c.newImage[s2 + i], 0) << "byte " << i << " of s: a string ends in zeros to its capacity";
    }
    EXPECT_EQ(std::memcmp(c.newImage.data() + w2, wide, sizeof wide), 0);
    for (const char* path : {"v_INT", "v_SINT", "v_UINT", "v_USINT", "v_UDINT", "v_BYTE", "r", "s", "w"}) {
        EXPECT_EQ(c.entry(path).outcome, TransferOutcome::Converted) << path;
    }
    EXPECT_FALSE(c.plan.report.losesState());
}

// Some value of the old type does not exist in the new one: re-initialised, whatever the value
// held at the swap (CODESYS re-initialises on any type change; docs/runtime-control.md).
TEST(TransferRules, LossyElementaryChangeReinitialisesAndSaysWhy) {
    Change c;
    struct Case {
        const char* name;
        ValueKind from;
        std::uint32_t fromSize;
        ValueKind to;
        std::uint32_t toSize;
    };
    const Case cases[] = {
        {"DINT", ValueKind::DInt, 4, ValueKind::Int, 2}, {"LREAL", ValueKind::LReal, 8, ValueKind::Real, 4},
        {"BOOL", ValueKind::Bool, 1, ValueKind::Int, 2}, {"UINT", ValueKind::UInt, 2, ValueKind::Int, 2},
        {"INT", ValueKind::Int, 2, ValueKind::UDInt, 4}, {"WORD", ValueKind::Word, 2, ValueKind::Int, 2}};
    std::vector<std::uint32_t> from, to;
    for (const Case& k : cases) {
        from.push_back(c.v1.global(std::string("v_") + k.name, c.v1.elementary(k.from, k.name, k.fromSize)));
        to.push_back(c.v2.global(std::string("v_") + k.name, c.v2.elementary(k.to, "TO", k.toSize)));
    }
    const std::uint32_t s1 = c.v1.global("s", stringType(c.v1, ValueKind::String, 40));
    const std::uint32_t s2 = c.v2.global("s", stringType(c.v2, ValueKind::String, 20));
    c.v2.init<std::int16_t>(to[0], 77);
    c.prepareOld();
    for (std::uint32_t off : from) {
        poke<std::uint8_t>(c.oldImage.data(), off, 1); // a small value that would fit: still re-initialised
    }
    std::memcpy(c.oldImage.data() + s1, "short", 6);
    c.apply();
    EXPECT_EQ(peek<std::int16_t>(c.newImage.data(), to[0]), 77) << "the initial value";
    for (std::size_t i = 1; i < from.size(); ++i) {
        EXPECT_EQ(c.newImage[to[i]], 0) << cases[i].name;
    }
    EXPECT_EQ(c.newImage[s2], 0);
    for (const char* path : {"v_DINT", "v_LREAL", "v_BOOL", "v_UINT", "v_INT", "v_WORD", "s"}) {
        const TransferEntry& e = c.entry(path);
        EXPECT_EQ(e.outcome, TransferOutcome::Reinitialised) << path;
        EXPECT_NE(e.reason.find("type changed"), std::string::npos) << path << ": " << e.reason;
    }
    EXPECT_NE(c.entry("v_DINT").reason.find("not every DINT value fits in TO"), std::string::npos);
    EXPECT_EQ(c.entry("s").fromType, "STRING[40]");
    EXPECT_EQ(c.entry("s").toType, "STRING[20]");
    EXPECT_TRUE(c.plan.report.losesState());
}

// FB instances keep their members by name through a changed FB type: inherited members (listed
// first, as EXTENDS lays them out), nested instances, and instances in an array (which the
// variable table does not list member by member).
TEST(TransferRules, FbInstancesKeepMembersByNameNestedAndInherited) {
    Change c;
    const auto version = [](ModuleBuilder& b, bool changed) {
        const std::uint32_t tBool = b.elementary(ValueKind::Bool, "BOOL", 1);
        const std::uint32_t tInt = b.elementary(ValueKind::Int, "INT", 2);
        const std::uint32_t tDint = b.elementary(ValueKind::DInt, "DINT", 4);
        const std::uint32_t ton = b.composite(ValueKind::FunctionBlock, "TON", {{"IN", tBool}, {"ET", tDint}});
        // Heater EXTENDS Device: Device's members first. v2: Device gains `serial`, Heater gains
        // `limit` and its `setpoint` becomes DINT.
        std::vector<std::pair<std::string, std::uint32_t>> members = {{"enabled", tBool}};
        if (changed) {
            members.emplace_back("serial", tDint);
        }
        members.emplace_back("setpoint", changed ? tDint : tInt);
        members.emplace_back("timer", ton);
        if (changed) {
            members.emplace_back("limit", tInt);
        }
        const std::uint32_t heater =
            b.composite(ValueKind::FunctionBlock, "Heater", members, changed ? "FB Heater{2}" : "FB Heater{1}");
        const std::uint32_t heaters = b.array(heater, {0, 1});
        const std::uint32_t prog =
            b.composite(ValueKind::Program, "Prog", {{"h", heater}, {"all", heaters}}, changed ? "P{2}" : "P{1}");
        b.program("Main", prog);
        return b.m.programs[0].offset;
    };
    const std::uint32_t base1 = version(c.v1, false);
    const std::uint32_t base2 = version(c.v2, true);
    // v1 Heater: enabled@0, setpoint@8, timer@16 (IN@16, ET@24), size 32; h@0, all@32 (2 x 32).
    // v2 Heater: enabled@0, serial@8, setpoint@16, timer@24 (ET@32), limit@40, size 48; all@48.
    c.prepareOld();
    std::uint8_t* o = c.oldImage.data();
    poke<std::uint8_t>(o, base1 + 0, 1);
    poke<std::int16_t>(o, base1 + 8, 180);
    poke<std::uint8_t>(o, base1 + 16, 1);
    poke<std::int32_t>(o, base1 + 24, 4500);
    poke<std::int16_t>(o, base1 + 32 + 32 + 8, 90);    // all[1].setpoint
    poke<std::int32_t>(o, base1 + 32 + 32 + 24, 1200); // all[1].timer.ET
    c.apply();
    const std::uint8_t* n = c.newImage.data();
    EXPECT_EQ(peek<std::uint8_t>(n, base2 + 0), 1);
    EXPECT_EQ(peek<std::int32_t>(n, base2 + 16), 180);
    EXPECT_EQ(peek<std::uint8_t>(n, base2 + 24), 1);
    EXPECT_EQ(peek<std::int32_t>(n, base2 + 32), 4500) << "the nested TON keeps its elapsed time";
    EXPECT_EQ(peek<std::int32_t>(n, base2 + 48 + 48 + 16), 90);
    EXPECT_EQ(peek<std::int32_t>(n, base2 + 48 + 48 + 32), 1200);
    EXPECT_EQ(c.entry("Main.h.timer").outcome, TransferOutcome::Kept);
    EXPECT_EQ(c.entry("Main.h.setpoint").outcome, TransferOutcome::Converted);
    EXPECT_EQ(c.entry("Main.h.serial").outcome, TransferOutcome::Added);
    EXPECT_EQ(c.entry("Main.all").outcome, TransferOutcome::Converted);
}

// Retain restore shares the rules: a RETAIN ENUM keeps its value by name, a RETAIN INT that became
// DINT is converted, from a slot file that describes types by their signatures only.
TEST(TransferRules, RetainRestoreUsesTheSameRules) {
    Change c;
    const std::uint32_t i1 = c.v1.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t s1 = enumType(c.v1, "State", {"Idle", "Fill", "Heat"}, i1);
    const std::uint32_t state1 = c.v1.global("state", s1, true);
    const std::uint32_t count1 = c.v1.global("count", i1, true);
    const std::uint32_t i2 = c.v2.elementary(ValueKind::Int, "INT", 2);
    const std::uint32_t d2 = c.v2.elementary(ValueKind::DInt, "DINT", 4);
    const std::uint32_t s2 = enumType(c.v2, "State", {"Idle", "Clean", "Fill", "Heat"}, i2);
    const std::uint32_t state2 = c.v2.global("state", s2, true);
    const std::uint32_t count2 = c.v2.global("count", d2, true);
    auto old = std::make_unique<LoadedProgram>(std::make_shared<const bytecode::Module>(c.v1.m), "old");
    old->resetToInitialImage();
    poke<std::int16_t>(old->image(), state1, 2); // Heat
    poke<std::int16_t>(old->image(), count1, -300);
    const RetainLayout layout(c.v1.m);
    std::vector<std::uint8_t> payload(layout.payloadSize());
    layout.capture(old->image(), payload);
    std::vector<std::uint8_t> file;
    encodeRetainSlot(layout, payload, 1, file);
    RetainImage image;
    std::string error;
    ASSERT_TRUE(decodeRetainSlot(file, image, error)) << error;
    LoadedProgram fresh(std::make_shared<const bytecode::Module>(c.v2.m), "new");
    fresh.resetToInitialImage();
    const RetainApplyReport r = applyRetainImage(image, fresh);
    EXPECT_EQ(peek<std::int16_t>(fresh.image(), state2), 3) << "Heat, by name";
    EXPECT_EQ(peek<std::int32_t>(fresh.image(), count2), -300);
    EXPECT_EQ(r.restored, 2u);
    EXPECT_TRUE(r.dropped.empty());
}

} // namespace
} // namespace takt::engine
