// The disassembler names operands, labels jump targets and shows source lines.
#include <gtest/gtest.h>

#include "bytecode_test_util.h"
#include "takt/bytecode/disasm.h"

namespace takt::bytecode {
namespace {

TEST(Disasm, NamesOperandsAndVariables) {
    test::Layout l;
    Module m = test::validModule(&l);
    std::string text = disassemble(m);
    EXPECT_NE(text.find("MOVI_32      this+0 <Main.count>, 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("ADD_I32      g:0x8 <counter>, g:0x8 <counter>, this+0 <Main.count>\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("ADD_I32      fp+0, fp+4, fp+8\n"), std::string::npos) << text;
    EXPECT_NE(text.find("CALL_FB      Fb, this+8 <Main.fb>, 16\n"), std::string::npos) << text;
    EXPECT_NE(text.find("CALL_NATIVE  Len, fp+0\n"), std::string::npos) << text;
    // Fb has no single program instance: the member name comes from its instance type.
    EXPECT_NE(text.find("MOVI_32      this+4 <b>, 7\n"), std::string::npos) << text;
}

TEST(Disasm, LabelsJumpTargetsAndShowsSourceLines) {
    test::Layout l;
    Module m = test::validModule(&l);
    std::string text = disassemblePou(m, 0);
    char label[16];
    std::snprintf(label, sizeof label, "L%04x", l.mainRet);
    EXPECT_NE(text.find(std::string("JMP_F        this+4 <Main.flag>, ") + label + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find(std::string(label) + ":\n"), std::string::npos) << text;
    EXPECT_NE(text.find("; src/main.st:6:3\n"), std::string::npos) << text;
    EXPECT_EQ(text.rfind("pou 0 Main PROGRAM", 0), 0u) << text;
    DisasmOptions bare;
    bare.sourceLines = false;
    bare.variablePaths = false;
    std::string plain = disassemblePou(m, 0, bare);
    EXPECT_EQ(plain.find("src/main.st"), std::string::npos);
    EXPECT_EQ(plain.find('<'), std::string::npos);
}

TEST(Disasm, SurvivesUndecodableWords) {
    Module m = test::validModule();
    m.code[0] = 0xffffffu;
    std::string text = disassemblePou(m, 0);
    EXPECT_NE(text.find(".word        0x00ffffff"), std::string::npos) << text;
}

TEST(Disasm, SummaryListsProgramsAndIo) {
    std::string text = disassemble(test::validModule());
    EXPECT_NE(text.find("; program Main : Main at g:0x10 task Fast"), std::string::npos) << text;
    EXPECT_NE(text.find("; io %IX0.0 -> g:0x14 <Main.flag>"), std::string::npos) << text;
}

} // namespace
} // namespace takt::bytecode
