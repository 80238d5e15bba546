// The verifier accepts well-formed code and rejects each kind of bad operand, jump, index and
// table entry with its own reason.
#include <gtest/gtest.h>

#include <limits>

#include "bytecode_test_util.h"
#include "takt/bytecode/verifier.h"

namespace takt::bytecode {
namespace {

using test::fp;
using test::g;
using test::Layout;
using test::self;
using test::validModule;

void expectRejected(const Module& m, VerifyError code, std::string_view fragment) {
    VerifyResult r = verify(m);
    EXPECT_EQ(r.code, code) << r.message;
    EXPECT_NE(r.message.find(fragment), std::string::npos) << r.message;
}

TEST(Verifier, AcceptsTheValidModule) {
    VerifyResult r = verify(validModule());
    EXPECT_TRUE(r.ok()) << r.message;
}

// Every instruction of opcodes.def, with operands made up from its format alone, verifies: the
// checks are generated from the same table the instruction set is defined in.
TEST(Verifier, EveryOpcodeWithInRangeOperandsIsAccepted) {
    for (std::uint32_t op = 0; op < kOpcodeCount; ++op) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        const OpcodeInfo& info = kOpcodeInfo[op];
        const auto o = static_cast<Opcode>(op);
        const bool divide = o == Opcode::DIV_I32_IMM || o == Opcode::MOD_I32_IMM || o == Opcode::DIV_U32_IMM ||
                            o == Opcode::MOD_U32_IMM || o == Opcode::ADDMOD_I32_IMM || o == Opcode::ADDMOD_U32_IMM;
        const bool loop = info.name.starts_with("LOOP_");
        m.code.push_back(op);
        for (std::uint8_t k = 0; k < info.operandCount; ++k) {
            switch (info.operands[k].kind) {
            case OperandKind::Dest:
            case OperandKind::Source: m.code.push_back(fp(0)); break;
            case OperandKind::Imm32:
                // FOR back-edges: a step in the instruction's direction (checked by the verifier).
                if ((k == 2 && (o == Opcode::LOOP_I32_IMM || o == Opcode::LOOP_I32)) ||
                    (k == 3 && o == Opcode::LOOP_I16_IMM)) {
                    m.code.push_back(1);
                } else if ((k == 2 && (o == Opcode::LOOP_DN_I32_IMM || o == Opcode::LOOP_DN_I32)) ||
                           (k == 3 && o == Opcode::LOOP_DN_I16_IMM)) {
                    m.code.push_back(static_cast<std::uint32_t>(-1));
                } else {
                    m.code.push_back(divide ? 7 : 0);
                }
                break;
            case OperandKind::Imm64:
                // DIV/MOD by a constant: the reciprocal of the divisor 7 (checked by the verifier).
                if (divide) {
                    m.code.insert(m.code.end(), {static_cast<std::uint32_t>(divisorReciprocal(7)),
                                                 static_cast<std::uint32_t>(divisorReciprocal(7) >> 32)});
                } else {
                    m.code.insert(m.code.end(), {0, 0});
                }
                break;
            // FOR back-edges jump backwards (here to themselves), other jumps to the RET after them.
            case OperandKind::Jump: m.code.push_back(loop ? entry : entry + info.length); break;
            case OperandKind::Pou: m.code.push_back(2); break;
            case OperandKind::Native: m.code.push_back(static_cast<std::uint32_t>(Native::Mid)); break;
            case OperandKind::Count: m.code.push_back(4); break;
            }
        }
        m.code.push_back(static_cast<std::uint32_t>(Opcode::RET));
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        VerifyResult r = verify(m);
        EXPECT_TRUE(r.ok()) << info.name << ": " << r.message;
    }
}

// A FOR back-edge steps only when counter + step does not pass the bound; that holds without
// overflow only for a step in the instruction's direction, so the verifier refuses the others.
TEST(Verifier, RejectsALoopStepAgainstTheInstructionsDirection) {
    auto moduleWith = [](Opcode op, std::int32_t step) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        const bool slot = op == Opcode::LOOP_I32 || op == Opcode::LOOP_DN_I32;
        m.code.insert(m.code.end(), {static_cast<std::uint32_t>(op), fp(0), slot ? fp(8) : 10u,
                                     static_cast<std::uint32_t>(step), entry});
        m.code.push_back(static_cast<std::uint32_t>(Opcode::RET));
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        return m;
    };
    for (const Opcode up : {Opcode::LOOP_I32_IMM, Opcode::LOOP_I32}) {
        EXPECT_TRUE(verify(moduleWith(up, 3)).ok()) << opcodeName(up);
        for (const std::int32_t bad : {0, -1, std::numeric_limits<std::int32_t>::min()}) {
            const VerifyResult r = verify(moduleWith(up, bad));
            EXPECT_EQ(r.code, VerifyError::Immediate) << opcodeName(up) << " " << bad;
            EXPECT_NE(r.message.find("must be positive"), std::string::npos) << r.message;
        }
    }
    for (const Opcode down : {Opcode::LOOP_DN_I32_IMM, Opcode::LOOP_DN_I32}) {
        EXPECT_TRUE(verify(moduleWith(down, -3)).ok()) << opcodeName(down);
        for (const std::int32_t bad : {0, 1, std::numeric_limits<std::int32_t>::max()}) {
            const VerifyResult r = verify(moduleWith(down, bad));
            EXPECT_EQ(r.code, VerifyError::Immediate) << opcodeName(down) << " " << bad;
            EXPECT_NE(r.message.find("must be negative"), std::string::npos) << r.message;
        }
    }
}

// The VM counts the watchdog on every FOR back-edge without testing the direction, so a LOOP_*
// whose target lies after it is refused.
TEST(Verifier, RejectsALoopBackEdgeThatJumpsForward) {
    auto moduleWith = [](std::uint32_t skip) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        const std::uint32_t loopAt = entry + 1; // after a NOP
        const std::uint32_t target = skip == 0 ? entry : loopAt + 5 + skip - 1;
        m.code.insert(m.code.end(), {static_cast<std::uint32_t>(Opcode::NOP),
                                     static_cast<std::uint32_t>(Opcode::LOOP_I32_IMM), fp(0), 10u, 1u, target});
        for (std::uint32_t k = 1; k < skip; ++k) {
            m.code.push_back(static_cast<std::uint32_t>(Opcode::NOP));
        }
        m.code.push_back(static_cast<std::uint32_t>(Opcode::RET));
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        return m;
    };
    EXPECT_TRUE(verify(moduleWith(0)).ok());
    expectRejected(moduleWith(2), VerifyError::JumpTarget, "not a backward jump");
}

// ADDMOD_*_IMM carries its divisor and reciprocal after two sources: checked like MOD_*_IMM.
TEST(Verifier, ChecksTheDivisorOfARingIndex) {
    auto moduleWith = [](Opcode op, std::uint32_t divisor, std::uint64_t r) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        m.code.insert(m.code.end(),
                      {static_cast<std::uint32_t>(op), fp(0), fp(4), fp(8), divisor, static_cast<std::uint32_t>(r),
                       static_cast<std::uint32_t>(r >> 32), static_cast<std::uint32_t>(Opcode::RET)});
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        return m;
    };
    EXPECT_TRUE(verify(moduleWith(Opcode::ADDMOD_I32_IMM, 256, divisorReciprocal(256))).ok());
    EXPECT_TRUE(verify(moduleWith(Opcode::ADDMOD_U32_IMM, 7, divisorReciprocal(7))).ok());
    expectRejected(moduleWith(Opcode::ADDMOD_I32_IMM, 0, 0), VerifyError::Immediate, "divisor 0");
    expectRejected(moduleWith(Opcode::ADDMOD_U32_IMM, 10, divisorReciprocal(9)), VerifyError::Immediate, "reciprocal");
}

// ADDX_* reads any element its bounds check admits: the array operand must cover all of them.
TEST(Verifier, ChecksTheArrayOperandOfAnElementAdd) {
    auto moduleWith = [](std::uint32_t count) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        // fp+0 := fp+8 + element of a REAL array of `count` elements at fp+16 (frame of 64 bytes)
        m.code.insert(m.code.end(), {static_cast<std::uint32_t>(Opcode::ADDX_F32), fp(0), fp(16), fp(4), 0u, 4u, count,
                                     fp(8), static_cast<std::uint32_t>(Opcode::RET)});
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        return m;
    };
    EXPECT_TRUE(verify(moduleWith(12)).ok()); // 16 + 12 * 4 = 64
    EXPECT_FALSE(verify(moduleWith(13)).ok());
}

// DIV/MOD by a constant trusts its reciprocal operand, so the verifier recomputes it; a zero
// divisor (or 1 and -1 for a division, which the reciprocal cannot express) is refused.
TEST(Verifier, RejectsADivisorImmediateItCannotExecuteExactly) {
    auto moduleWith = [](Opcode op, std::uint32_t divisor, std::uint64_t r) {
        Module m = validModule();
        auto entry = static_cast<std::uint32_t>(m.code.size());
        m.code.insert(m.code.end(),
                      {static_cast<std::uint32_t>(op), fp(0), fp(4), divisor, static_cast<std::uint32_t>(r),
                       static_cast<std::uint32_t>(r >> 32), static_cast<std::uint32_t>(Opcode::RET)});
        m.pous.push_back({"T", PouKind::Function, entry, static_cast<std::uint32_t>(m.code.size()), 64, kNone, kNone});
        return m;
    };
    EXPECT_TRUE(verify(moduleWith(Opcode::MOD_I32_IMM, 65521, divisorReciprocal(65521))).ok());
    // MOD_I32_IMM takes the magnitude: 2^31 for a divisor of INT_MIN; a negative word is a
    // magnitude too, with its own reciprocal.
    EXPECT_TRUE(verify(moduleWith(Opcode::MOD_I32_IMM, 0x80000000u, divisorReciprocal(0x80000000u))).ok());
    expectRejected(moduleWith(Opcode::MOD_I32_IMM, static_cast<std::uint32_t>(-10), divisorReciprocal(10)),
                   VerifyError::Immediate, "reciprocal");
    EXPECT_TRUE(verify(moduleWith(Opcode::DIV_I32_IMM, static_cast<std::uint32_t>(-10), divisorReciprocal(10))).ok());
    EXPECT_TRUE(verify(moduleWith(Opcode::MOD_I32_IMM, 1, divisorReciprocal(1))).ok());
    expectRejected(moduleWith(Opcode::MOD_I32_IMM, 0, 0), VerifyError::Immediate, "divisor 0");
    expectRejected(moduleWith(Opcode::MOD_U32_IMM, 10, divisorReciprocal(10) + 1), VerifyError::Immediate,
                   "reciprocal");
    expectRejected(moduleWith(Opcode::DIV_I32_IMM, static_cast<std::uint32_t>(-1), divisorReciprocal(1)),
                   VerifyError::Immediate, "divisor");
    expectRejected(moduleWith(Opcode::DIV_U32_IMM, 1, divisorReciprocal(1)), VerifyError::Immediate, "divisor 1");
    expectRejected(moduleWith(Opcode::DIV_I32_IMM, 10, divisorReciprocal(9)), VerifyError::Immediate, "reciprocal");
}

TEST(Verifier, RejectsUnknownOpcode) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.mainRet] = kOpcodeCount;
    expectRejected(m, VerifyError::UnknownOpcode, "unknown opcode");
}

TEST(Verifier, RejectsInstructionRunningPastItsPou) {
    Layout l;
    Module m = validModule(&l);
    m.pous[0].codeEnd = l.mainRet - 1; // cuts CALL_NATIVE's operand
    expectRejected(m, VerifyError::TruncatedInstr, "CALL_NATIVE runs past the end");
}

TEST(Verifier, RejectsFallingOffThePou) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.mainRet] = static_cast<std::uint32_t>(Opcode::NOP);
    expectRejected(m, VerifyError::FallsThrough, "ends with NOP");
}

TEST(Verifier, RejectsJumpIntoAnInstruction) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.jmpF + 2] = l.add + 1;
    expectRejected(m, VerifyError::JumpTarget, "jump target");
}

TEST(Verifier, RejectsJumpIntoAnotherPou) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.jmpF + 2] = l.fnAdd;
    expectRejected(m, VerifyError::JumpTarget, "is not an instruction of 'Main'");
}

TEST(Verifier, RejectsAbsoluteOperandOutsideTheGlobals) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.add + 1] = g(38); // 4 bytes at 38 > 40
    expectRejected(m, VerifyError::OperandRange, "outside constants + globals");
}

TEST(Verifier, RejectsWriteIntoConstants) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.add + 1] = g(4);
    expectRejected(m, VerifyError::ConstantWrite, "read-only constants");
    m.code[l.add + 1] = g(8);
    m.code[l.add + 2] = g(4); // reading a constant is fine
    EXPECT_TRUE(verify(m).ok()) << verify(m).message;
}

TEST(Verifier, RejectsInstanceOperandOutsideTheInstance) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.movi + 1] = self(13); // Main's instance is 16 bytes
    expectRejected(m, VerifyError::OperandRange, "outside the instance (16 bytes)");
}

TEST(Verifier, RejectsFrameOperandOutsideTheFrame) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.fnAdd + 3] = fp(9); // Add's frame is 12 bytes
    expectRejected(m, VerifyError::OperandRange, "outside the frame (12 bytes)");
}

TEST(Verifier, RejectsReservedAddressTag) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.fnAdd + 2] = address(3, 0);
    expectRejected(m, VerifyError::OperandTag, "reserved tag");
}

TEST(Verifier, RejectsInstanceOperandInAFunction) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.fnAdd + 2] = self(0);
    expectRejected(m, VerifyError::OperandTag, "without an instance");
}

TEST(Verifier, RejectsPouIndexOutOfRange) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.callFn + 1] = 3;
    expectRejected(m, VerifyError::PouIndex, "POU index 3 out of range");
}

TEST(Verifier, RejectsFbCallOfAPouWithoutInstance) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.callFb + 1] = 1; // Add is a FUNCTION
    expectRejected(m, VerifyError::PouIndex, "'Add' has no instance");
}

TEST(Verifier, RejectsFbInstanceNotFittingItsSpace) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.callFb + 2] = self(12); // Fb is 8 bytes: [12, 20) leaves Main's 16
    expectRejected(m, VerifyError::OperandRange, "outside the instance");
}

// CALL_VIRT reads the dispatch header at its instance operand without a run-time check: the 4
// bytes must lie inside the caller's own space.
TEST(Verifier, ChecksTheHeaderOperandOfAVirtualCall) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.callFb] = static_cast<std::uint32_t>(Opcode::CALL_VIRT); // same length as CALL_FB
    m.code[l.callFb + 1] = self(12);                                  // Main's last 4 bytes
    m.code[l.callFb + 2] = 0;
    m.code[l.callFb + 3] = 16;
    EXPECT_TRUE(verify(m).ok()) << verify(m).message;
    m.code[l.callFb + 1] = self(14); // [14, 18) leaves Main's 16
    expectRejected(m, VerifyError::OperandRange, "outside the instance");
    m.code[l.callFb + 1] = address(3, 0);
    expectRejected(m, VerifyError::OperandTag, "reserved tag");
}

TEST(Verifier, RejectsNativeIndexOutOfRangeOrOfTheWrongKind) {
    Layout l;
    Module m = validModule(&l);
    m.code[l.native + 1] = kNativeCount;
    expectRejected(m, VerifyError::NativeIndex, "not a native function");
    m.code[l.native + 1] = static_cast<std::uint32_t>(Native::Ton);
    expectRejected(m, VerifyError::NativeIndex, "not a native function");
}

TEST(Verifier, RejectsNativeArgumentBlockOutsideTheFrame) {
    Layout l;
    Module m = validModule(&l);
    EXPECT_EQ(nativeSlotCount(static_cast<std::uint32_t>(Native::Mid)), 4u); // result + IN, L, P
    EXPECT_EQ(nativeSlotCount(static_cast<std::uint32_t>(Native::IntToString)), 2u);
    m.code[l.native + 1] = static_cast<std::uint32_t>(Native::Replace); // 5 slots = 40 bytes
    m.code[l.native + 2] = fp(16);                                      // [16, 56) > 48
    expectRejected(m, VerifyError::OperandRange, "outside the frame");
}

TEST(Verifier, RejectsMathSelectorOutOfRange) {
    Module m = validModule();
    m.pous[1].frameSize = 16;
    auto at = test::emit(m, Opcode::MATH_F64, {fp(0), fp(8), kMathFnCount});
    test::emit(m, Opcode::RET, {});
    m.pous.push_back({"M", PouKind::Function, at, static_cast<std::uint32_t>(m.code.size()), 16, kNone, kNone});
    expectRejected(m, VerifyError::Immediate, "math function selector");
}

// CHK_PTR tests a pointer's alignment with a mask, which is only right for a power of two.
TEST(Verifier, RejectsAPointerAlignmentThatIsNotAPowerOfTwo) {
    for (const std::uint32_t align : {0u, 3u, 6u}) {
        Module m = validModule();
        m.pous[1].frameSize = 16;
        auto at = test::emit(m, Opcode::CHK_PTR, {fp(0), align, 4});
        test::emit(m, Opcode::RET, {});
        m.pous.push_back({"P", PouKind::Function, at, static_cast<std::uint32_t>(m.code.size()), 16, kNone, kNone});
        expectRejected(m, VerifyError::Immediate, "pointer alignment " + std::to_string(align));
    }
}

TEST(Verifier, RejectsBadTypeReferences) {
    Module m = validModule();
    m.types[3].fields[0].type = 99;
    expectRejected(m, VerifyError::TypeTable, "field 'count' has type 99");
    m = validModule();
    m.types[3].fields[2].offset = 12; // Fb (8 bytes) at 12 leaves Main (16)
    expectRejected(m, VerifyError::TypeTable, "leaves the type");
    m = validModule();
    m.pous[0].instanceType = 42;
    expectRejected(m, VerifyError::PouTable, "instance type 42");
    m = validModule();
    m.variables[0].type = 7;
    expectRejected(m, VerifyError::VariableTable, "'counter': type 7");
}

TEST(Verifier, RejectsFrameLargerThanTheStack) {
    Module m = validModule();
    m.pous[1].frameSize = m.stackSize + 1;
    expectRejected(m, VerifyError::PouTable, "does not fit the stack");
}

// The debugger reads and writes a halted frame's variables by the frame layout: each must lie in
// its POU's frame and have a type and a kind a frame holds.
TEST(Verifier, RejectsAFrameVariableOutsideItsFrame) {
    Module m = validModule();
    m.pous[0].frame.push_back(FrameVar{"t", 0, 44, VarKind::Temp, false}); // DINT at 44 of a 48-byte frame
    EXPECT_TRUE(verify(m).ok());
    m.pous[0].frame[0].offset = 45;
    expectRejected(m, VerifyError::PouTable, "frame variable 't' at offset 45 leaves the frame of 48 bytes");
    m.pous[0].frame[0] = FrameVar{"t", 99, 0, VarKind::Temp, false};
    expectRejected(m, VerifyError::PouTable, "frame variable 't' has no valid type or kind");
    m.pous[0].frame[0] = FrameVar{"t", 0, 0, VarKind::Global, false};
    expectRejected(m, VerifyError::PouTable, "frame variable 't' has no valid type or kind");
}

TEST(Verifier, RejectsPouCodeRangeOutsideTheCode) {
    Module m = validModule();
    m.pous[2].codeEnd = static_cast<std::uint32_t>(m.code.size()) + 1;
    expectRejected(m, VerifyError::PouTable, "outside the code");
}

TEST(Verifier, RejectsImageSizeMismatch) {
    Module m = validModule();
    m.initImage.pop_back();
    expectRejected(m, VerifyError::ImageLayout, "initial image");
}

TEST(Verifier, RejectsProgramInstanceOutsideTheGlobals) {
    Module m = validModule();
    m.programs[0].offset = 30; // 16 bytes from 30 > 40
    expectRejected(m, VerifyError::ProgramInstance, "outside the globals");
    m = validModule();
    m.programs[0].task = 5;
    expectRejected(m, VerifyError::ProgramInstance, "task 5 out of range");
}

TEST(Verifier, RejectsTablesPointingOutsideTheImage) {
    Module m = validModule();
    m.io[0].imageOffset = 40;
    expectRejected(m, VerifyError::IoTable, "%IX0.0");
    m = validModule();
    m.access[0].offset = 38;
    expectRejected(m, VerifyError::AccessTable, "'COUNT'");
    m = validModule();
    m.tasks[0].singleOffset = 2;
    expectRejected(m, VerifyError::TaskTable, "SINGLE input");
    m = validModule();
    m.tasks[0].io = {1};
    expectRejected(m, VerifyError::TaskTable, "I/O index 1");
}

TEST(Verifier, RejectsUnsortedDebugMap) {
    Module m = validModule();
    std::swap(m.debug[0], m.debug[1]);
    expectRejected(m, VerifyError::DebugTable, "out of order");
    m = validModule();
    m.debug[2].file = 1;
    expectRejected(m, VerifyError::DebugTable, "outside the code or the file list");
}

TEST(Verifier, RejectsInitCodeThatIsNotAFunctionEntry) {
    Layout l;
    Module m = validModule(&l);
    m.initCode = l.add;
    expectRejected(m, VerifyError::InitCode, "initCode");
    m.initCode = m.pous[1].code; // Add: no instance, frame on the stack
    EXPECT_TRUE(verify(m).ok()) << verify(m).message;
}

} // namespace
} // namespace takt::bytecode
