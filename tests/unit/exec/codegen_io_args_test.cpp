// Direct addresses used as values in statements, and program instance arguments in a
// CONFIGURATION: both reach the process image through I/O bindings like located variables.
#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using testing::StRunner;

const bytecode::IoBinding* binding(const bytecode::Module& m, std::string_view address) {
    for (const auto& b : m.io) {
        if (sameName(b.address, address)) {
            return &b;
        }
    }
    return nullptr;
}

TEST(CodegenDirectAddress, ReadsAndWritesTheProcessImageCells) {
    StRunner r(R"(
PROGRAM Main
  VAR w : WORD; b : BOOL; n : INT; END_VAR
  b := %IX0.1;
  %QX1.2 := NOT %IX0.1;
  w := %IW2;
  %QW4 := UINT_TO_WORD(WORD_TO_UINT(w) + 1);
  %MD1 := UDINT_TO_DWORD(DWORD_TO_UDINT(%MD1) + 1);
  IF %IX0.1 AND %IB3 > 7 THEN n := n + 1; END_IF;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    const auto& m = r.module();
    const bytecode::IoBinding* in = binding(m, "%IX0.1");
    ASSERT_NE(in, nullptr);
    EXPECT_EQ(in->area, bytecode::IoArea::Input);
    EXPECT_EQ(in->byteOffset, 0u);
    EXPECT_EQ(in->bit, 1u);
    EXPECT_EQ(in->size, 0u);
    const bytecode::IoBinding* qw = binding(m, "%QW4");
    ASSERT_NE(qw, nullptr);
    EXPECT_EQ(qw->area, bytecode::IoArea::Output);
    EXPECT_EQ(qw->byteOffset, 8u); // word-indexed: %QW4 = bytes 8..9
    EXPECT_EQ(qw->size, 2u);
    const bytecode::IoBinding* md = binding(m, "%MD1");
    ASSERT_NE(md, nullptr);
    EXPECT_EQ(md->area, bytecode::IoArea::Memory);
    EXPECT_EQ(md->byteOffset, 4u);
    std::size_t inputs = 0;
    for (const auto& b : m.io) {
        inputs += sameName(b.address, "%IX0.1") ? 1 : 0;
    }
    EXPECT_EQ(inputs, 1u); // one cell per address, however often it is used

    r.setIo<bool>("%IX0.1", true);
    r.setIo<std::uint16_t>("%IW2", 41);
    r.setIo<std::uint8_t>("%IB3", 9);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.b"));
    EXPECT_FALSE(r.io<bool>("%QX1.2"));
    EXPECT_EQ(r.get<std::uint16_t>("Main.w"), 41);
    EXPECT_EQ(r.io<std::uint16_t>("%QW4"), 42);
    EXPECT_EQ(r.io<std::uint32_t>("%MD1"), 1u);
    EXPECT_EQ(r.get<std::int16_t>("Main.n"), 1);
    r.setIo<bool>("%IX0.1", false);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.io<bool>("%QX1.2"));
    EXPECT_EQ(r.io<std::uint32_t>("%MD1"), 2u);
}

TEST(CodegenProgramArguments, InputsBeforeAndOutputsAfterEachRun) {
    StRunner r(R"(
PROGRAM Scale
  VAR_INPUT in1 : INT; k : INT := 2; END_VAR
  VAR_OUTPUT out1 : INT; flag : BOOL; END_VAR
  VAR runs : INT; END_VAR
  runs := runs + 1;
  out1 := in1 * k;
  flag := in1 > 10;
END_PROGRAM
CONFIGURATION Cell
  VAR_GLOBAL src : INT := 7; dst : INT; other : INT; END_VAR
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#1ms, PRIORITY := 1);
    PROGRAM p1 WITH Fast : Scale (in1 := src, out1 => dst, flag => %QX0.3);
    PROGRAM p2 WITH Fast : Scale (in1 := WORD_TO_INT(%IW1), k := 3, out1 => other);
    PROGRAM p3 : Scale;
  END_RESOURCE
END_CONFIGURATION
)");
    ASSERT_TRUE(r.ok) << r.errors();
    r.setIo<std::int16_t>("%IW1", 5);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("dst"), 14);
    EXPECT_FALSE(r.io<bool>("%QX0.3"));
    EXPECT_EQ(r.get<std::int16_t>("other"), 15);
    EXPECT_EQ(r.get<std::int16_t>("p1.runs"), 1);
    EXPECT_EQ(r.get<std::int16_t>("p3.out1"), 0);
    r.set<std::int16_t>("src", 20);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("dst"), 40);
    EXPECT_TRUE(r.io<bool>("%QX0.3"));
    EXPECT_EQ(r.get<std::int16_t>("p1.runs"), 2);
    // Every instance still names a PROGRAM of its type.
    for (const auto& p : r.module().programs) {
        EXPECT_EQ(r.module().pous[p.pou].kind, bytecode::PouKind::Program) << p.name;
        EXPECT_EQ(r.module().pous[p.pou].instanceType, r.module().pous[r.module().programs[2].pou].instanceType);
    }
}

TEST(CodegenProgramArguments, MismatchedArgumentsAreCompileErrors) {
    StRunner r(R"(
PROGRAM Scale
  VAR_INPUT in1 : INT; END_VAR
  VAR_OUTPUT out1 : INT; END_VAR
  out1 := in1;
END_PROGRAM
CONFIGURATION Cell
  VAR_GLOBAL s : STRING; END_VAR
  RESOURCE Cpu ON PLC
    PROGRAM p1 : Scale (in1 := s, out1 := s);
  END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.errors().find("E0201"), std::string::npos) << r.errors(); // STRING given to an INT input
    EXPECT_NE(r.errors().find("E0309"), std::string::npos) << r.errors(); // an output connected with :=
}

} // namespace
} // namespace takt::compiler
