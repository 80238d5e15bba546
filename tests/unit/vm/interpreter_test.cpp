// Every opcode family, the traps and the corners LANGUAGE.md pins, in both dispatch modes.
#include "vm_test_util.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

namespace takt::vm::test {
namespace {

class InterpreterTest : public DispatchTest {
protected:
    // Runs `d := a op b` with d at this+0, a at this+8, b at this+16.
    template <typename R, typename A, typename B> Trap binary(Opcode op, A a, B b, R& out) {
        TestProgram p;
        Asm as;
        as.op(op, {self(0), self(8), self(16)});
        as.op(Opcode::RET);
        p.setMain(as);
        p.set<A>(8, a);
        p.set<B>(16, b);
        const Trap t = p.run(useSwitch());
        out = p.get<R>(0);
        return t;
    }
    template <typename R, typename A> Trap unary(Opcode op, A a, R& out) {
        TestProgram p;
        Asm as;
        as.op(op, {self(0), self(8)});
        as.op(Opcode::RET);
        p.setMain(as);
        p.set<A>(8, a);
        const Trap t = p.run(useSwitch());
        out = p.get<R>(0);
        return t;
    }
};

TEST_P(InterpreterTest, IntegerArithmeticWrapsByDefault) {
    std::int32_t r = 0;
    EXPECT_EQ(binary(Opcode::ADD_I32, std::numeric_limits<std::int32_t>::max(), 1, r), Trap::None);
    EXPECT_EQ(r, std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(binary(Opcode::SUB_I32, 5, 7, r), Trap::None);
    EXPECT_EQ(r, -2);
    EXPECT_EQ(binary(Opcode::MUL_I32, 65536, 65536, r), Trap::None);
    EXPECT_EQ(r, 0);
    std::int64_t r64 = 0;
    EXPECT_EQ(binary(Opcode::ADD_I64, std::numeric_limits<std::int64_t>::max(), std::int64_t{1}, r64), Trap::None);
    EXPECT_EQ(r64, std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(binary(Opcode::MUL_I64, std::int64_t{-3}, std::int64_t{7}, r64), Trap::None);
    EXPECT_EQ(r64, -21);
    EXPECT_EQ(unary(Opcode::NEG_I32, std::numeric_limits<std::int32_t>::min(), r), Trap::None);
    EXPECT_EQ(r, std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(unary(Opcode::ABS_I32, -9, r), Trap::None);
    EXPECT_EQ(r, 9);
}

TEST_P(InterpreterTest, TrappingArithmeticReportsOverflow) {
    std::int32_t r = 0;
    EXPECT_EQ(binary(Opcode::ADD_I32_T, std::numeric_limits<std::int32_t>::max(), 1, r), Trap::Overflow);
    EXPECT_EQ(binary(Opcode::ADD_I32_T, 40, 2, r), Trap::None);
    EXPECT_EQ(r, 42);
    EXPECT_EQ(binary(Opcode::MUL_I32_T, 65536, 65536, r), Trap::Overflow);
    std::uint32_t u = 0;
    EXPECT_EQ(binary(Opcode::SUB_U32_T, 1u, 2u, u), Trap::Overflow);
    std::int64_t r64 = 0;
    EXPECT_EQ(binary(Opcode::SUB_I64_T, std::numeric_limits<std::int64_t>::min(), std::int64_t{1}, r64),
              Trap::Overflow);
    EXPECT_EQ(unary(Opcode::NEG_I32_T, std::numeric_limits<std::int32_t>::min(), r), Trap::Overflow);
}

TEST_P(InterpreterTest, DivisionTruncatesAndModHasTheSignOfTheDividend) {
    std::int32_t r = 0;
    EXPECT_EQ(binary(Opcode::MOD_I32, -7, 3, r), Trap::None);
    EXPECT_EQ(r, -1);
    EXPECT_EQ(binary(Opcode::MOD_I32, 7, -3, r), Trap::None);
    EXPECT_EQ(r, 1);
    EXPECT_EQ(binary(Opcode::DIV_I32, -7, 2, r), Trap::None);
    EXPECT_EQ(r, -3);
    std::int64_t r64 = 0;
    EXPECT_EQ(binary(Opcode::MOD_I64, std::int64_t{-7}, std::int64_t{3}, r64), Trap::None);
    EXPECT_EQ(r64, -1);
    std::uint32_t u = 0;
    EXPECT_EQ(binary(Opcode::DIV_U32, 0xFFFFFFFFu, 2u, u), Trap::None);
    EXPECT_EQ(u, 0x7FFFFFFFu);
}

TEST_P(InterpreterTest, DivisionByZeroAndIntMinByMinusOneTrapBeforeExecuting) {
    std::int32_t r = 0;
    EXPECT_EQ(binary(Opcode::DIV_I32, 1, 0, r), Trap::DivByZero);
    EXPECT_EQ(binary(Opcode::MOD_I32, 1, 0, r), Trap::DivByZero);
    EXPECT_EQ(binary(Opcode::DIV_I32, std::numeric_limits<std::int32_t>::min(), -1, r), Trap::Overflow);
    EXPECT_EQ(binary(Opcode::MOD_I32, std::numeric_limits<std::int32_t>::min(), -1, r), Trap::None);
    EXPECT_EQ(r, 0);
    std::int64_t r64 = 0;
    EXPECT_EQ(binary(Opcode::DIV_I64, std::numeric_limits<std::int64_t>::min(), std::int64_t{-1}, r64), Trap::Overflow);
    EXPECT_EQ(binary(Opcode::DIV_I64, std::int64_t{5}, std::int64_t{0}, r64), Trap::DivByZero);
    std::uint64_t u64 = 0;
    EXPECT_EQ(binary(Opcode::MOD_U64, std::uint64_t{5}, std::uint64_t{0}, u64), Trap::DivByZero);
}

TEST_P(InterpreterTest, RealToIntegerRoundsHalfToEvenAndTruncIsTowardZero) {
    std::int32_t r = 0;
    const std::pair<float, std::int32_t> cases[] = {{2.5f, 2}, {3.5f, 4}, {-2.5f, -2}, {0.5f, 0}, {1.4f, 1}};
    for (const auto& [in, want] : cases) {
        EXPECT_EQ(unary(Opcode::F32_TO_I32, in, r), Trap::None);
        EXPECT_EQ(r, want) << in;
    }
    std::int64_t r64 = 0;
    EXPECT_EQ(unary(Opcode::F64_TO_I64, 2.5, r64), Trap::None);
    EXPECT_EQ(r64, 2);
    EXPECT_EQ(unary(Opcode::F64_TO_I64, -3.5, r64), Trap::None);
    EXPECT_EQ(r64, -4);
    EXPECT_EQ(unary(Opcode::TRUNC_F64_I32, -3.9, r), Trap::None);
    EXPECT_EQ(r, -3);
    EXPECT_EQ(unary(Opcode::F64_TO_I32, 1e20, r), Trap::None);
    EXPECT_EQ(r, std::numeric_limits<std::int32_t>::max());
    EXPECT_EQ(unary(Opcode::F64_TO_I32, std::nan(""), r), Trap::None);
    EXPECT_EQ(r, 0);
}

TEST_P(InterpreterTest, ShiftsByWidthGiveZeroAndRotatesWorkModuloWidth) {
    std::uint32_t r = 0;
    EXPECT_EQ(binary(Opcode::SHL_32, 1u, 32u, r), Trap::None);
    EXPECT_EQ(r, 0u);
    EXPECT_EQ(binary(Opcode::SHR_32, 0x80000000u, 40u, r), Trap::None);
    EXPECT_EQ(r, 0u);
    EXPECT_EQ(binary(Opcode::SHL_32, 1u, 4u, r), Trap::None);
    EXPECT_EQ(r, 16u);
    EXPECT_EQ(binary(Opcode::ROL_8, 0x81u, 9u, r), Trap::None); // 9 MOD 8 = 1
    EXPECT_EQ(r, 0x03u);
    EXPECT_EQ(binary(Opcode::ROR_8, 0x01u, 1u, r), Trap::None);
    EXPECT_EQ(r, 0x80u);
    EXPECT_EQ(binary(Opcode::ROL_16, 0x8001u, 17u, r), Trap::None);
    EXPECT_EQ(r, 0x0003u);
    EXPECT_EQ(binary(Opcode::ROL_32, 0x80000001u, 33u, r), Trap::None);
    EXPECT_EQ(r, 0x00000003u);
    std::uint64_t r64 = 0;
    EXPECT_EQ(binary(Opcode::SHL_64, std::uint64_t{1}, 64u, r64), Trap::None);
    EXPECT_EQ(r64, 0u);
    EXPECT_EQ(binary(Opcode::ROR_64, std::uint64_t{1}, 65u, r64), Trap::None);
    EXPECT_EQ(r64, 0x8000000000000000ull);
}

TEST_P(InterpreterTest, ComparisonsAndFloatOps) {
    std::uint8_t b = 9;
    EXPECT_EQ(binary(Opcode::LT_I32, -1, 0, b), Trap::None);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(binary(Opcode::LT_U32, 0xFFFFFFFFu, 0u, b), Trap::None);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(binary(Opcode::GE_F64, 1.5, 1.5, b), Trap::None);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(binary(Opcode::NE_F32, 1.0f, 2.0f, b), Trap::None);
    EXPECT_EQ(b, 1);
    double d = 0;
    EXPECT_EQ(binary(Opcode::DIV_F64, 1.0, 0.0, d), Trap::None);
    EXPECT_TRUE(std::isinf(d));
    EXPECT_EQ(binary(Opcode::EXPT_F64, 2.0, 10.0, d), Trap::None);
    EXPECT_EQ(d, 1024.0);
    float f = 0;
    EXPECT_EQ(binary(Opcode::MAX_F32, 1.0f, -2.0f, f), Trap::None);
    EXPECT_EQ(f, 1.0f);
    EXPECT_EQ(unary(Opcode::SQRT_F64, 16.0, d), Trap::None);
    EXPECT_EQ(d, 4.0);
}

TEST_P(InterpreterTest, NarrowValuesWidenAndNarrowThroughMoves) {
    TestProgram p;
    Asm a;
    a.op(Opcode::SX_8_32, {self(0), self(16)});
    a.op(Opcode::ZX_8_32, {self(4), self(16)});
    a.op(Opcode::SX_16_32, {self(8), self(18)});
    a.op(Opcode::ADD_I32_IMM, {self(12), self(8), imm(1)});
    a.op(Opcode::MOV_16, {self(20), self(12)}); // INT := DINT wraps
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::int8_t>(16, -2);
    p.set<std::int16_t>(18, 32767);
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(0), -2);
    EXPECT_EQ(p.get<std::uint32_t>(4), 254u);
    EXPECT_EQ(p.get<std::int32_t>(8), 32767);
    EXPECT_EQ(p.get<std::int16_t>(20), -32768);
}

TEST_P(InterpreterTest, CheckedNarrowingTrapsOutsideTheRange) {
    TestProgram p;
    Asm a;
    a.op(Opcode::CHKR_I32, {self(0), imm(-32768), imm(32767)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::int32_t>(0, 32768);
    EXPECT_EQ(p.run(useSwitch()), Trap::Overflow);
    p.set<std::int32_t>(0, -32768);
    EXPECT_EQ(p.run(useSwitch()), Trap::None);
}

// FOR i := 1 TO 10 DO sum := sum + i; END_FOR with a fused compare-and-branch.
TEST_P(InterpreterTest, CountedLoopWithFusedBranch) {
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {self(0), imm(1)});
    a.op(Opcode::MOVI_32, {self(4), imm(0)});
    const std::uint32_t top = a.here();
    const std::uint32_t exit = a.op(Opcode::JGT_I32_IMM, {self(0), imm(10), 0});
    a.op(Opcode::ADD_I32, {self(4), self(4), self(0)});
    a.op(Opcode::ADD_I32_IMM, {self(0), self(0), imm(1)});
    a.op(Opcode::JMP, {top});
    a.patch(exit, 2, a.here());
    a.op(Opcode::RET);
    p.setMain(a);
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(4), 55);
}

TEST_P(InterpreterTest, ArrayIndexIsBoundsChecked) {
    // ARRAY[1..4] OF DINT at this+16; arr[i] := 7 through IDX + STI.
    TestProgram p;
    Asm a;
    a.op(Opcode::IDX, {fr(0), self(16), self(0), imm(1), 4, 4});
    a.op(Opcode::STI_32, {fr(0), 0, self(4)});
    a.op(Opcode::LDI_32, {self(8), fr(0), 0});
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::int32_t>(4, 7);
    for (std::int32_t i : {1, 4}) {
        p.set<std::int32_t>(0, i);
        ASSERT_EQ(p.run(useSwitch()), Trap::None) << i;
        EXPECT_EQ(p.get<std::int32_t>(16 + 4 * (i - 1)), 7);
        EXPECT_EQ(p.get<std::int32_t>(8), 7);
    }
    for (std::int32_t i : {0, 5, std::numeric_limits<std::int32_t>::min()}) {
        p.set<std::int32_t>(0, i);
        EXPECT_EQ(p.run(useSwitch()), Trap::ArrayBounds) << i;
        EXPECT_EQ(p.trap.codeOffset, 0u);
        EXPECT_EQ(p.trap.pou, 0u);
    }
}

TEST_P(InterpreterTest, NullAndOutOfImageReferencesTrap) {
    TestProgram p;
    Asm a;
    a.op(Opcode::LDI_32, {self(8), self(0), 0});
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::uint32_t>(0, 0);
    EXPECT_EQ(p.run(useSwitch()), Trap::NullReference);
    p.set<std::uint32_t>(0, static_cast<std::uint32_t>(p.image.size()) - 2);
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidReference);
    p.set<std::uint32_t>(0, kInst + 4);
    p.set<std::int32_t>(4, 99);
    EXPECT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(8), 99);
}

// A POINTER may come from arithmetic: CHK_PTR lets through only an aligned offset whose access
// fits the image, before the load that uses it.
TEST_P(InterpreterTest, PointerCheckTrapsNullMisalignedAndOutsideTheImage) {
    TestProgram p;
    Asm a;
    a.op(Opcode::CHK_PTR, {self(0), 4, 4});
    a.op(Opcode::LDI_32, {self(8), self(0), 0});
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::int32_t>(4, 42);
    p.set<std::uint32_t>(0, 0);
    EXPECT_EQ(p.run(useSwitch()), Trap::NullReference);
    p.set<std::uint32_t>(0, kInst + 6);
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidReference);
    p.set<std::uint32_t>(0, static_cast<std::uint32_t>(p.image.size()));
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidReference);
    p.set<std::uint32_t>(0, 0xFFFFFFFCu);
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidReference);
    p.set<std::uint32_t>(0, kInst + 4);
    EXPECT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(8), 42);
}

TEST_P(InterpreterTest, StoresThroughReferencesCannotWriteConstants) {
    TestProgram p;
    Asm a;
    a.op(Opcode::STI_32, {self(0), 0, self(4)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.set<std::uint32_t>(0, 8);
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidReference);
}

TEST_P(InterpreterTest, ForStepZeroTraps) {
    TestProgram p;
    Asm a;
    a.op(Opcode::CHK_STEP_I32, {self(0)});
    a.op(Opcode::RET);
    p.setMain(a);
    EXPECT_EQ(p.run(useSwitch()), Trap::ForStepZero);
    p.set<std::int32_t>(0, -1);
    EXPECT_EQ(p.run(useSwitch()), Trap::None);
}

TEST_P(InterpreterTest, BudgetStopsAnEndlessLoop) {
    TestProgram p;
    Asm a;
    a.op(Opcode::JMP, {0});
    p.setMain(a);
    p.budget = 1000;
    EXPECT_EQ(p.run(useSwitch()), Trap::BudgetExceeded);
    EXPECT_EQ(p.trap.codeOffset, 0u);
}

TEST_P(InterpreterTest, AbortFlagStopsWhileTrueFromAnotherThread) {
    TestProgram p;
    Asm a;
    const std::uint32_t top = a.here();
    a.op(Opcode::ADD_I32_IMM, {self(0), self(0), imm(1)});
    a.op(Opcode::JMP, {top});
    p.setMain(a);
    std::atomic<bool> abort{false};
    p.abort = &abort;
    const auto start = std::chrono::steady_clock::now();
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        abort.store(true);
    });
    const Trap t = p.run(useSwitch());
    stopper.join();
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(t, Trap::Aborted);
    EXPECT_GT(p.get<std::int32_t>(0), 0);
    EXPECT_LT(took, std::chrono::seconds(2));
}

TEST_P(InterpreterTest, FunctionCallsUseFramesInPlace) {
    // FUNCTION Sq(x : DINT) : DINT — frame: [0] result, [4] x; Sq := x * x.
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {fr(20), imm(12)}); // argument into the callee frame at +16
    a.op(Opcode::CALL_FN, {1, 16});
    a.op(Opcode::MOV_32, {self(0), fr(16)}); // result read back in place
    a.op(Opcode::RET);
    const std::uint32_t fn = a.here();
    a.op(Opcode::MUL_I32, {fr(0), fr(4), fr(4)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.module.pous[0].codeEnd = fn;
    bytecode::PouEntry sq;
    sq.name = "Sq";
    sq.kind = bytecode::PouKind::Function;
    sq.code = fn;
    sq.codeEnd = a.here();
    sq.frameSize = 8;
    p.module.pous.push_back(sq);
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(0), 144);
}

TEST_P(InterpreterTest, FbCallSetsThisAndRecursionOverflowsTheStack) {
    // FB Acc: this+0 := this+0 + this+4. Instance at program this+64.
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {self(68), imm(5)});
    a.op(Opcode::CALL_FB, {1, self(64), 0});
    a.op(Opcode::CALL_FB, {1, self(64), 0});
    a.op(Opcode::ADDR, {self(0), self(64)});
    a.op(Opcode::CALL_FB_IND, {1, self(0), 0});
    a.op(Opcode::RET);
    const std::uint32_t fb = a.here();
    a.op(Opcode::ADD_I32, {self(0), self(0), self(4)});
    a.op(Opcode::RET);
    const std::uint32_t rec = a.here();
    a.op(Opcode::CALL_FN, {2, 0});
    a.op(Opcode::RET);
    p.setMain(a);
    p.module.pous[0].codeEnd = fb;
    bytecode::TypeDesc accType;
    accType.kind = bytecode::ValueKind::FunctionBlock;
    accType.size = 8;
    p.module.types.push_back(accType);
    bytecode::PouEntry acc;
    acc.kind = bytecode::PouKind::FunctionBlock;
    acc.code = fb;
    acc.codeEnd = rec;
    acc.instanceType = 1;
    p.module.pous.push_back(acc);
    bytecode::PouEntry self;
    self.kind = bytecode::PouKind::Function;
    self.code = rec;
    self.codeEnd = a.here();
    p.module.pous.push_back(self);
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(64), 15);
    EXPECT_EQ(p.run(useSwitch(), 2), Trap::StackOverflow);
    EXPECT_EQ(p.trap.pou, 2u);
}

TEST_P(InterpreterTest, InterfaceCallDispatchesThroughTheVtable) {
    // Instance at this+64: [0] vtable offset (constants at 16: {pou 1}), [4] counter.
    TestProgram p;
    Asm a;
    a.op(Opcode::ADDR, {self(0), self(64)});
    a.op(Opcode::CALL_IFACE, {self(0), 0, 0});
    a.op(Opcode::MOVI_32, {self(0), 0});
    a.op(Opcode::CALL_IFACE, {self(0), 0, 0});
    a.op(Opcode::RET);
    const std::uint32_t method = a.here();
    a.op(Opcode::ADD_I32_IMM, {self(4), self(4), imm(3)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.module.pous[0].codeEnd = method;
    bytecode::PouEntry m;
    m.kind = bytecode::PouKind::Method;
    m.code = method;
    m.codeEnd = a.here();
    p.module.pous.push_back(m);
    p.setAbs<std::uint32_t>(16, 1);
    p.set<std::uint32_t>(64, 16);
    EXPECT_EQ(p.run(useSwitch()), Trap::NullReference);
    EXPECT_EQ(p.get<std::int32_t>(68), 3);
}

TEST_P(InterpreterTest, VirtualCallDispatchesOnTheInstanceItself) {
    // Instance at this+64: [0] vtable offset (constants at 16: {kNone, pou 1}), [4] counter.
    TestProgram p;
    Asm a;
    a.op(Opcode::CALL_VIRT, {self(64), 1, 0});
    a.op(Opcode::CALL_VIRT, {self(64), 1, 0});
    a.op(Opcode::CALL_VIRT, {self(64), 0, 0}); // a slot the type does not fill
    a.op(Opcode::RET);
    const std::uint32_t method = a.here();
    a.op(Opcode::ADD_I32_IMM, {self(4), self(4), imm(3)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.module.pous[0].codeEnd = method;
    bytecode::PouEntry m;
    m.kind = bytecode::PouKind::Method;
    m.code = method;
    m.codeEnd = a.here();
    p.module.pous.push_back(m);
    p.setAbs<std::uint32_t>(16, bytecode::kNone);
    p.setAbs<std::uint32_t>(20, 1);
    p.set<std::uint32_t>(64, 16);
    EXPECT_EQ(p.run(useSwitch()), Trap::InvalidCall);
    EXPECT_EQ(p.get<std::int32_t>(68), 6);
}

TEST_P(InterpreterTest, StringMoveTruncatesAndCompares) {
    TestProgram p;
    Asm a;
    a.op(Opcode::SMOV, {self(32), self(0), 3});
    a.op(Opcode::SCMP, {self(48), self(0), self(16)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.setString(0, "hello");
    p.setString(16, "help");
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.getString(32), "hel");
    EXPECT_EQ(p.get<std::int32_t>(48), -1);
}

TEST_P(InterpreterTest, InvalidOpcodeAndTrapInstruction) {
    TestProgram p;
    if (useSwitch()) { // computed goto trusts the verifier and does not range-check opcodes
        Asm a;
        a.code.push_back(0xFFFFu);
        p.setMain(a);
        EXPECT_EQ(p.run(true), Trap::InvalidOpcode);
    }
    Asm b;
    b.op(Opcode::TRAP, {static_cast<std::uint32_t>(Trap::ArrayBounds)});
    p.setMain(b);
    EXPECT_EQ(p.run(useSwitch()), Trap::ArrayBounds);
}

// MUX with K out of range compiles to TRAP MuxSelector; AssertionFailed needs ASSERT_FAIL's
// operands and None is not a fault, so TRAP with either is an invalid instruction.
TEST_P(InterpreterTest, TrapInstructionRaisesMuxSelector) {
    TestProgram p;
    const std::pair<Trap, Trap> cases[] = {{Trap::MuxSelector, Trap::MuxSelector},
                                           {Trap::InvalidArgument, Trap::InvalidArgument},
                                           {Trap::AssertionFailed, Trap::InvalidOpcode},
                                           {Trap::None, Trap::InvalidOpcode}};
    for (const auto& [raised, reported] : cases) {
        Asm a;
        a.op(Opcode::TRAP, {static_cast<std::uint32_t>(raised)});
        p.setMain(a);
        EXPECT_EQ(p.run(useSwitch()), reported) << trapName(raised);
    }
    EXPECT_EQ(trapMessage(Trap::MuxSelector), "MUX selector K out of range");
}

TAKT_VM_BOTH_DISPATCH_MODES(InterpreterTest);

TEST(VmTest, RunsAProgramThroughThePublicApi) {
    bytecode::Module m;
    m.constSize = 8;
    m.globalSize = 16;
    m.stackSize = 64;
    m.initImage.assign(24, 0);
    m.initImage[8] = 40;
    Asm a;
    a.op(Opcode::ADD_I32_IMM, {self(0), self(0), imm(2)});
    a.op(Opcode::RET);
    m.code = a.code;
    bytecode::PouEntry main;
    main.code = 0;
    main.codeEnd = a.here();
    m.pous.push_back(main);
    std::vector<std::uint8_t> image(Vm::requiredImageSize(m));
    Vm vm(m, image);
    vm.resetImage();
    EXPECT_EQ(vm.runInit(), Trap::None);
    EXPECT_EQ(vm.runPou(0, 8), Trap::None);
    EXPECT_EQ(image[8], 42);
    EXPECT_EQ(vm.runPou(5, 8), Trap::InvalidCall);
    EXPECT_EQ(trapName(Trap::DivByZero), "DivByZero");
    EXPECT_EQ(trapMessage(Trap::ArrayBounds), "array index out of bounds");
}

} // namespace
} // namespace takt::vm::test
