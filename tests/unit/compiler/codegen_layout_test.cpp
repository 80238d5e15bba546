// Back end: data image layout and the module's tables.
#include "codegen_test_support.h"

namespace takt::compiler::test {
namespace {

TEST(CodegenLayout, ImplicitProgramInstanceWithNestedFbMembers) {
    Compiled c(R"(
FUNCTION_BLOCK Filler
  VAR_INPUT level : INT; END_VAR
  VAR_OUTPUT full : BOOL; END_VAR
  VAR t : TON; END_VAR
  t(IN := level > 10, PT := T#1s);
  full := t.Q;
END_FUNCTION_BLOCK
PROGRAM Main
  VAR
    count : DINT := 5;
    fill : Filler;
  END_VAR
  count := count + 1;
  fill(level := 3);
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    ASSERT_EQ(c.module.programs.size(), 1u);
    const auto& p = c.module.programs[0];
    EXPECT_EQ(p.name, "Main");
    EXPECT_EQ(p.task, bytecode::kNone);
    EXPECT_EQ(c.module.pous[p.pou].name, "Main");
    const auto* count = c.var("Main.count");
    const auto* fill = c.var("Main.fill");
    const auto* et = c.var("Main.fill.t.ET");
    const auto* level = c.var("Main.fill.level");
    ASSERT_NE(count, nullptr);
    ASSERT_NE(fill, nullptr);
    ASSERT_NE(et, nullptr);
    ASSERT_NE(level, nullptr);
    EXPECT_EQ(count->offset, p.offset);
    EXPECT_EQ(level->kind, bytecode::VarKind::Input);
    EXPECT_GE(et->offset, fill->offset);
    EXPECT_LT(et->offset + et->size, fill->offset + fill->size + 1);
    // The initial image holds the initialiser, after the constants.
    EXPECT_GE(count->offset, c.module.constSize);
    std::int32_t v = 0;
    std::memcpy(&v, c.module.initImage.data() + count->offset, 4);
    EXPECT_EQ(v, 5);
    // Standard FBs are natives; their instance type names the POU.
    const std::uint32_t ton = c.pou("TON");
    ASSERT_NE(ton, bytecode::kNone);
    EXPECT_EQ(c.module.pous[ton].kind, bytecode::PouKind::Native);
    EXPECT_EQ(c.module.pous[ton].native, static_cast<std::uint32_t>(bytecode::Native::Ton));
}

TEST(CodegenLayout, RetainFlagsForGlobalsProgramAndFbMembers) {
    Compiled c(R"(
VAR_GLOBAL RETAIN g1 : INT; END_VAR
VAR_GLOBAL g2 : INT; END_VAR
VAR_GLOBAL PERSISTENT g3 : REAL; END_VAR
FUNCTION_BLOCK Fb
  VAR RETAIN kept : DINT; END_VAR
  VAR lost : DINT; END_VAR
END_FUNCTION_BLOCK
PROGRAM Main
  VAR RETAIN r : INT; inst : Fb; END_VAR
  VAR n : INT; plain : Fb; END_VAR
  n := g1 + g2;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    EXPECT_TRUE(c.var("g1")->retain);
    EXPECT_FALSE(c.var("g2")->retain);
    EXPECT_TRUE(c.var("g3")->retain);
    EXPECT_EQ(c.var("g1")->kind, bytecode::VarKind::Global);
    EXPECT_TRUE(c.var("Main.r")->retain);
    EXPECT_FALSE(c.var("Main.n")->retain);
    EXPECT_TRUE(c.var("Main.inst.lost")->retain) << "a RETAIN instance retains all its members";
    EXPECT_TRUE(c.var("Main.plain.kept")->retain);
    EXPECT_FALSE(c.var("Main.plain.lost")->retain);
}

TEST(CodegenLayout, IoByteOffsetsInWordMode) {
    const char* src = R"(
PROGRAM Main
  VAR
    b AT %IX3.5 : BOOL;
    w AT %IW2 : WORD;
    d AT %QD3 : DWORD;
    l AT %ML1 : LWORD;
    y AT %IB7 : BYTE;
  END_VAR
  d := WORD_TO_DWORD(w);
END_PROGRAM
)";
    Compiled word(src);
    ASSERT_TRUE(word.ok) << word.rendered();
    ASSERT_EQ(word.module.io.size(), 5u);
    const auto& io = word.module.io;
    EXPECT_EQ(io[0].area, bytecode::IoArea::Input);
    EXPECT_EQ(io[0].byteOffset, 3u);
    EXPECT_EQ(io[0].bit, 5u);
    EXPECT_EQ(io[0].size, 0u);
    EXPECT_EQ(io[1].byteOffset, 4u);
    EXPECT_EQ(io[1].size, 2u);
    EXPECT_EQ(io[2].area, bytecode::IoArea::Output);
    EXPECT_EQ(io[2].byteOffset, 12u);
    EXPECT_EQ(io[3].area, bytecode::IoArea::Memory);
    EXPECT_EQ(io[3].byteOffset, 8u);
    EXPECT_EQ(io[4].byteOffset, 7u);
    EXPECT_EQ(io[1].imageOffset, word.var("Main.w")->offset);
    EXPECT_EQ(io[1].path, "Main.w");

    CodegenOptions byteMode;
    byteMode.addressMode = AddressMode::Byte;
    Compiled byte(src, byteMode);
    ASSERT_TRUE(byte.ok) << byte.rendered();
    EXPECT_EQ(byte.module.io[1].byteOffset, 2u);
    EXPECT_EQ(byte.module.io[2].byteOffset, 3u);
    EXPECT_EQ(byte.module.io[3].byteOffset, 1u);
    EXPECT_EQ(byte.module.io[0].byteOffset, 3u);
}

TEST(CodegenLayout, ConfigurationInstancesTasksAndWildcards) {
    Compiled c(R"(
PROGRAM Worker
  VAR_INPUT sensor AT %I* : BOOL; END_VAR
  VAR n : DINT; END_VAR
  n := n + 1;
END_PROGRAM
CONFIGURATION Cfg
  VAR_GLOBAL trigger : BOOL; END_VAR
  RESOURCE Res ON PLC
    TASK Fast(INTERVAL := T#10ms, PRIORITY := 1);
    TASK Ev(SINGLE := trigger, PRIORITY := 2);
    PROGRAM W1 WITH Fast : Worker;
    PROGRAM W2 WITH Ev : Worker;
    PROGRAM W3 : Worker;
  END_RESOURCE
  VAR_CONFIG
    Res.W1.sensor AT %IX1.2 : BOOL;
    Res.W2.sensor AT %IX4.0 : BOOL;
  END_VAR
END_CONFIGURATION
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_EQ(c.module.programs.size(), 3u);
    EXPECT_EQ(c.module.programs[0].name, "W1");
    EXPECT_EQ(c.module.programs[0].task, 0u);
    EXPECT_EQ(c.module.programs[1].task, 1u);
    EXPECT_EQ(c.module.programs[2].task, bytecode::kNone);
    EXPECT_NE(c.module.programs[0].offset, c.module.programs[1].offset);
    ASSERT_EQ(c.module.tasks.size(), 2u);
    EXPECT_EQ(c.module.tasks[0].intervalNs, 10'000'000);
    EXPECT_EQ(c.module.tasks[0].priority, 1u);
    EXPECT_EQ(c.module.tasks[1].singleOffset, c.var("trigger")->offset);
    // Each instance's wildcard resolves through its own VAR_CONFIG entry.
    std::vector<std::string> addrs;
    for (const auto& io : c.module.io) {
        addrs.push_back(io.path + "=" + io.address);
    }
    EXPECT_EQ(addrs, (std::vector<std::string>{"W1.sensor=%IX1.2", "W2.sensor=%IX4.0"}));
    EXPECT_EQ(c.module.io[0].imageOffset, c.var("W1.sensor")->offset);
    EXPECT_TRUE(c.verified.ok()) << c.verified.message;
}

TEST(CodegenLayout, TypeTableSignaturesAndInitialisers) {
    Compiled c(R"(
TYPE Mode : (Idle, Run := 5, Stop); END_TYPE
TYPE Point : STRUCT x : INT := 7; y : REAL; END_STRUCT; END_TYPE
PROGRAM Main
  VAR
    m : Mode;
    p : Point;
    q : Point := (y := 2.5);
    a : ARRAY [1..4] OF INT := [1, 2(9)];
    s : STRING[10] := 'abc';
    b : INT := 4;
    c : INT := b + 1;
  END_VAR
  b := c;
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    ASSERT_TRUE(c.verified.ok()) << c.verified.message;
    const auto& img = c.module.initImage;
    auto i16 = [&](std::uint32_t at) {
        std::int16_t v = 0;
        std::memcpy(&v, img.data() + at, 2);
        return v;
    };
    EXPECT_EQ(i16(c.var("Main.m")->offset), 0);
    EXPECT_EQ(i16(c.var("Main.p")->offset), 7);
    EXPECT_EQ(i16(c.var("Main.q")->offset), 7);
    float y = 0;
    std::memcpy(&y, img.data() + c.var("Main.q")->offset + 4, 4);
    EXPECT_EQ(y, 2.5f);
    const std::uint32_t a = c.var("Main.a")->offset;
    EXPECT_EQ(i16(a), 1);
    EXPECT_EQ(i16(a + 2), 9);
    EXPECT_EQ(i16(a + 4), 9);
    EXPECT_EQ(i16(a + 6), 0);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(img.data() + c.var("Main.s")->offset)), "abc");
    // `c := b + 1` reads an earlier variable: init code computes it at cold start.
    EXPECT_NE(c.module.initCode, bytecode::kNone);
    const auto& mode = c.module.types[c.var("Main.m")->type];
    EXPECT_EQ(mode.kind, bytecode::ValueKind::Enum);
    ASSERT_EQ(mode.enumValues.size(), 3u);
    EXPECT_EQ(mode.enumValues[1].value, 5);
    EXPECT_EQ(c.var("Main.p")->type, c.var("Main.q")->type);
    EXPECT_NE(c.module.types[c.var("Main.p")->type].signature.find("X:INT@0"), std::string::npos);
}

} // namespace
} // namespace takt::compiler::test
