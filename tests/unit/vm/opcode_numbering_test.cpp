// Pins the instruction and native numbering: program.stbc files store these numbers, so a
// change must be deliberate and show up here. New instructions go just before ASSERT_FAIL, which
// stays the last one; any renumbering bumps kFormatVersion (version.h).
#include "takt/bytecode/opcodes.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string_view>

namespace takt::bytecode {
namespace {

constexpr std::array<std::string_view, 254> kGoldenOpcodes = {
    "NOP",           "RET",
    "JMP",           "JMP_T",
    "JMP_F",         "JEQ_I32",
    "JNE_I32",       "JLT_I32",
    "JLE_I32",       "JGT_I32",
    "JGE_I32",       "JEQ_I64",
    "JNE_I64",       "JLT_I64",
    "JLE_I64",       "JGT_I64",
    "JGE_I64",       "JLT_I32_IMM",
    "JLE_I32_IMM",   "JGT_I32_IMM",
    "JGE_I32_IMM",   "JEQ_I32_IMM",
    "JNE_I32_IMM",   "CHK_STEP_I32",
    "CHK_STEP_I64",  "CHKR_I32",
    "CHKR_U32",      "CHKR_I64",
    "TRAP",          "MOV_8",
    "MOV_16",        "MOV_32",
    "MOV_64",        "MOVI_8",
    "MOVI_16",       "MOVI_32",
    "MOVI_64",       "COPY",
    "ZERO",          "ADDR",
    "SX_8_32",       "ZX_8_32",
    "SX_16_32",      "ZX_16_32",
    "SX_32_64",      "ZX_32_64",
    "TO_BOOL_32",    "TO_BOOL_64",
    "ADD_I32",       "SUB_I32",
    "MUL_I32",       "DIV_I32",
    "MOD_I32",       "DIV_U32",
    "MOD_U32",       "NEG_I32",
    "ABS_I32",       "ADD_I32_IMM",
    "MUL_I32_IMM",   "ADD_I64",
    "SUB_I64",       "MUL_I64",
    "DIV_I64",       "MOD_I64",
    "DIV_U64",       "MOD_U64",
    "NEG_I64",       "ABS_I64",
    "ADD_I64_IMM",   "ADD_I32_T",
    "SUB_I32_T",     "MUL_I32_T",
    "ADD_U32_T",     "SUB_U32_T",
    "MUL_U32_T",     "ADD_I64_T",
    "SUB_I64_T",     "MUL_I64_T",
    "ADD_U64_T",     "SUB_U64_T",
    "MUL_U64_T",     "NEG_I32_T",
    "NEG_I64_T",     "ADD_F32",
    "SUB_F32",       "MUL_F32",
    "DIV_F32",       "NEG_F32",
    "ABS_F32",       "ADD_F64",
    "SUB_F64",       "MUL_F64",
    "DIV_F64",       "NEG_F64",
    "ABS_F64",       "SQRT_F32",
    "SQRT_F64",      "MATH_F32",
    "MATH_F64",      "ATAN2_F32",
    "ATAN2_F64",     "EXPT_F32",
    "EXPT_F64",      "EQ_I32",
    "NE_I32",        "LT_I32",
    "LE_I32",        "GT_I32",
    "GE_I32",        "LT_U32",
    "LE_U32",        "GT_U32",
    "GE_U32",        "EQ_I64",
    "NE_I64",        "LT_I64",
    "LE_I64",        "GT_I64",
    "GE_I64",        "LT_U64",
    "LE_U64",        "GT_U64",
    "GE_U64",        "EQ_F32",
    "NE_F32",        "LT_F32",
    "LE_F32",        "GT_F32",
    "GE_F32",        "EQ_F64",
    "NE_F64",        "LT_F64",
    "LE_F64",        "GT_F64",
    "GE_F64",        "MIN_I32",
    "MAX_I32",       "MIN_U32",
    "MAX_U32",       "MIN_I64",
    "MAX_I64",       "MIN_U64",
    "MAX_U64",       "MIN_F32",
    "MAX_F32",       "MIN_F64",
    "MAX_F64",       "AND_B",
    "OR_B",          "XOR_B",
    "NOT_B",         "AND_32",
    "OR_32",         "XOR_32",
    "NOT_32",        "AND_64",
    "OR_64",         "XOR_64",
    "NOT_64",        "SHL_32",
    "SHR_32",        "SHL_64",
    "SHR_64",        "ROL_8",
    "ROR_8",         "ROL_16",
    "ROR_16",        "ROL_32",
    "ROR_32",        "ROL_64",
    "ROR_64",        "I32_TO_F32",
    "I32_TO_F64",    "U32_TO_F32",
    "U32_TO_F64",    "I64_TO_F32",
    "I64_TO_F64",    "U64_TO_F32",
    "U64_TO_F64",    "F32_TO_F64",
    "F64_TO_F32",    "F32_TO_I32",
    "F64_TO_I32",    "F32_TO_I64",
    "F64_TO_I64",    "F64_TO_U64",
    "TRUNC_F32_I32", "TRUNC_F64_I32",
    "TRUNC_F32_I64", "TRUNC_F64_I64",
    "IDX",           "IDXP",
    "LDI_8",         "LDI_16",
    "LDI_32",        "LDI_64",
    "STI_8",         "STI_16",
    "STI_32",        "STI_64",
    "LDI_N",         "STI_N",
    "CHK_REF",       "SMOV",
    "SCMP",          "WSMOV",
    "WSCMP",         "CALL_FN",
    "CALL_FB",       "CALL_FB_IND",
    "CALL_IFACE",    "CALL_NATIVE",
    "LOOP_I32_IMM",  "LOOP_DN_I32_IMM",
    "LOOP_I32",      "LOOP_DN_I32",
    "DIV_I32_IMM",   "MOD_I32_IMM",
    "DIV_U32_IMM",   "MOD_U32_IMM",
    "JEQ_F32",       "JNE_F32",
    "JLT_F32",       "JLE_F32",
    "JNLT_F32",      "JNLE_F32",
    "JEQ_F64",       "JNE_F64",
    "JLT_F64",       "JLE_F64",
    "JNLT_F64",      "JNLE_F64",
    "LOOP_STEP_I32", "LOOP_STEP_I64",
    "LDX_8",         "LDX_16",
    "LDX_32",        "LDX_64",
    "STX_8",         "STX_16",
    "STX_32",        "STX_64",
    "LDX_S8",        "LDX_U8",
    "LDX_S16",       "LDX_U16",
    "LDX_N",         "STX_N",
    "LOOP_I16_IMM",  "LOOP_DN_I16_IMM",
    "MULADD_F32",    "MULADD_F64",
    "EQ_AGG",        "ASSERT_FAIL",
};

// W* and the STRING/WSTRING conversions (WSTRING string functions) were appended after StringToReal,
// the date and time natives after WstringToString.
constexpr std::array<std::string_view, 55> kGoldenNatives = {
    "Ton",
    "Tof",
    "Tp",
    "RTrig",
    "FTrig",
    "Ctu",
    "Ctd",
    "Ctud",
    "Sr",
    "Rs",
    "Len",
    "Left",
    "Right",
    "Mid",
    "Concat",
    "Insert",
    "Delete",
    "Replace",
    "Find",
    "ToBcd",
    "FromBcd",
    "ExptInt",
    "IntToString",
    "UintToString",
    "RealToString",
    "BoolToString",
    "TimeToString",
    "StringToInt",
    "StringToReal",
    "WLen",
    "WLeft",
    "WRight",
    "WMid",
    "WConcat",
    "WInsert",
    "WDelete",
    "WReplace",
    "WFind",
    "StringToWstring",
    "WstringToString",
    "DateToString",
    "TodToString",
    "DtToString",
    "StringToDate",
    "StringToTod",
    "StringToDt",
    "StringToTime",
    "ConcatDate",
    "ConcatTod",
    "ConcatDt",
    "SplitDate",
    "SplitTod",
    "SplitDt",
    "DayOfWeek",
    "Real32ToString",
};

TEST(OpcodeNumbering, MatchesTheGoldenList) {
    ASSERT_EQ(kOpcodeCount, kGoldenOpcodes.size()) << "opcodes were added or removed: append, then extend this list";
    for (std::uint32_t i = 0; i < kOpcodeCount; ++i) {
        EXPECT_EQ(kOpcodeInfo[i].name, kGoldenOpcodes[i]) << "opcode " << i;
    }
}

TEST(OpcodeNumbering, NativesMatchTheGoldenList) {
    ASSERT_EQ(kNativeCount, kGoldenNatives.size());
    for (std::uint32_t i = 0; i < kNativeCount; ++i) {
        EXPECT_EQ(kNativeInfo[i].name, kGoldenNatives[i]) << "native " << i;
    }
}

TEST(OpcodeInfo, LengthsFollowTheOperandFormats) {
    EXPECT_EQ(instructionLength(Opcode::RET), 1u);
    EXPECT_EQ(instructionLength(Opcode::ADD_I32), 4u);
    EXPECT_EQ(instructionLength(Opcode::MOVI_64), 4u); // address + two-word immediate
    EXPECT_EQ(instructionLength(Opcode::CHKR_I64), 6u);
    EXPECT_EQ(instructionLength(Opcode::IDX), 7u);
    const OpcodeInfo& add = opcodeInfo(Opcode::ADD_F64);
    ASSERT_EQ(add.operandCount, 3u);
    EXPECT_EQ(add.operands[0].kind, OperandKind::Dest);
    EXPECT_EQ(add.operands[1].kind, OperandKind::Source);
    EXPECT_EQ(add.operands[1].width, 8u);
    const OpcodeInfo& chk = opcodeInfo(Opcode::CHKR_I64);
    EXPECT_EQ(chk.operands[2].kind, OperandKind::Imm64);
    EXPECT_EQ(chk.operands[2].word, 3u);
}

TEST(OpcodeInfo, EveryFormatIsWellFormed) {
    std::set<std::string_view> names;
    for (const OpcodeInfo& info : kOpcodeInfo) {
        EXPECT_TRUE(names.insert(info.name).second) << info.name;
        EXPECT_FALSE(info.doc.empty()) << info.name;
        for (std::size_t i = 0; i < info.format.size(); ++i) {
            const char c = info.format[i];
            EXPECT_NE(std::string_view("dsiljpnc").find(c), std::string_view::npos) << info.name;
            if (c == 'd' || c == 's') {
                ASSERT_LT(i + 1, info.format.size()) << info.name;
                EXPECT_NE(std::string_view("01248").find(info.format[i + 1]), std::string_view::npos) << info.name;
                ++i;
            }
        }
    }
}

} // namespace
} // namespace takt::bytecode
