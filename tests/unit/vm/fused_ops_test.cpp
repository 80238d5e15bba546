// The fused instructions the back end emits for hot paths, in both dispatch modes: FOR
// back-edges (test, step and jump in one dispatch), division by a constant through its
// reciprocal, REAL compare-and-branch.
#include "vm_test_util.h"

#include <array>
#include <limits>
#include <utility>

namespace takt::vm::test {
namespace {

class FusedOpsTest : public DispatchTest {};

// counter at this+0, sum at this+4, bound slot at this+8, step slot at this+12, iterations at
// this+16: sum := sum + counter per iteration (the body runs once before the first back-edge).
struct LoopRun {
    Trap trap;
    std::int32_t counter;
    std::int32_t sum;
    std::int32_t iterations;
};

LoopRun runLoop(bool useSwitch, Opcode op, std::int32_t from, std::int32_t bound, std::int32_t step,
                std::uint64_t budget = 0) {
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {self(0), imm(from)});
    a.op(Opcode::MOVI_32, {self(4), imm(0)});
    a.op(Opcode::MOVI_32, {self(8), imm(bound)});
    a.op(Opcode::MOVI_32, {self(12), imm(step)});
    a.op(Opcode::MOVI_32, {self(16), imm(0)});
    const std::uint32_t top = a.here();
    a.op(Opcode::ADD_I32, {self(4), self(4), self(0)});
    a.op(Opcode::ADD_I32_IMM, {self(16), self(16), imm(1)});
    if (op == Opcode::LOOP_STEP_I32) {
        a.op(op, {self(0), self(8), self(12), top});
    } else {
        // The _IMM forms take the limit bound - step (the tests choose ones that fit).
        const bool slot = op == Opcode::LOOP_I32 || op == Opcode::LOOP_DN_I32;
        const auto limit = static_cast<std::int32_t>(std::int64_t{bound} - step);
        a.op(op, {self(0), slot ? self(8) : imm(limit), imm(step), top});
    }
    a.op(Opcode::RET);
    p.setMain(a);
    p.budget = budget;
    const Trap t = p.run(useSwitch);
    return {t, p.get<std::int32_t>(0), p.get<std::int32_t>(4), p.get<std::int32_t>(16)};
}

// counter at this+0, bound at this+8, step at this+16, iterations at this+24 (LOOP_STEP_I64).
struct LoopRun64 {
    Trap trap;
    std::int64_t counter;
    std::int64_t iterations;
};

LoopRun64 runLoop64(bool useSwitch, std::int64_t from, std::int64_t bound, std::int64_t step) {
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_64, {self(0), Asm::lo(from), Asm::hi(from)});
    a.op(Opcode::MOVI_64, {self(8), Asm::lo(bound), Asm::hi(bound)});
    a.op(Opcode::MOVI_64, {self(16), Asm::lo(step), Asm::hi(step)});
    a.op(Opcode::MOVI_64, {self(24), 0, 0});
    const std::uint32_t top = a.here();
    a.op(Opcode::ADD_I64_IMM, {self(24), self(24), 1, 0});
    a.op(Opcode::LOOP_STEP_I64, {self(0), self(8), self(16), top});
    a.op(Opcode::RET);
    p.setMain(a);
    const Trap t = p.run(useSwitch);
    return {t, p.get<std::int64_t>(0), p.get<std::int64_t>(24)};
}

constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kMax64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin64 = std::numeric_limits<std::int64_t>::min();

TEST_P(FusedOpsTest, LoopCountingUpRunsUpToTheBoundAndStopsOnIt) {
    for (const Opcode op : {Opcode::LOOP_I32_IMM, Opcode::LOOP_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 1, 10, 1);
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.sum, 55) << bytecode::opcodeName(op);
        EXPECT_EQ(r.iterations, 10) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 10) << bytecode::opcodeName(op); // the last value the body ran with
        const LoopRun by2 = runLoop(useSwitch(), op, 2, 10, 2);
        EXPECT_EQ(by2.sum, 2 + 4 + 6 + 8 + 10) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopStopsBeforeAStepThatWouldPassTheBound) {
    for (const Opcode op : {Opcode::LOOP_I32_IMM, Opcode::LOOP_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 0, 10, 3); // 0 3 6 9, not 12
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.iterations, 4) << bytecode::opcodeName(op);
        EXPECT_EQ(r.sum, 0 + 3 + 6 + 9) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 9) << bytecode::opcodeName(op);
        const LoopRun big = runLoop(useSwitch(), op, 0, 10, 11); // the first step already passes
        EXPECT_EQ(big.iterations, 1) << bytecode::opcodeName(op);
        EXPECT_EQ(big.counter, 0) << bytecode::opcodeName(op);
    }
    for (const Opcode op : {Opcode::LOOP_DN_I32_IMM, Opcode::LOOP_DN_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 10, 0, -4); // 10 6 2, not -2
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.iterations, 3) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 2) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopCountingDownUsesTheNegativeStep) {
    for (const Opcode op : {Opcode::LOOP_DN_I32_IMM, Opcode::LOOP_DN_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 10, 1, -3);
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.sum, 10 + 7 + 4 + 1) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 1) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopNearTheTypeLimitsEndsWithoutOverflow) {
    for (const Opcode op : {Opcode::LOOP_I32_IMM, Opcode::LOOP_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun up = runLoop(useSwitch(), op, kMax32 - 2, kMax32, 1);
        ASSERT_EQ(up.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(up.counter, kMax32) << bytecode::opcodeName(op);
        EXPECT_EQ(up.iterations, 3) << bytecode::opcodeName(op);
        const LoopRun by5 = runLoop(useSwitch(), op, kMax32 - 7, kMax32, 5); // would wrap past the maximum
        ASSERT_EQ(by5.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(by5.iterations, 2) << bytecode::opcodeName(op);
        EXPECT_EQ(by5.counter, kMax32 - 2) << bytecode::opcodeName(op);
        const LoopRun huge = runLoop(useSwitch(), op, kMin32, kMax32, kMax32); // room 2^32 - 1
        EXPECT_EQ(huge.iterations, 3) << bytecode::opcodeName(op);
        EXPECT_EQ(huge.counter, kMax32 - 1) << bytecode::opcodeName(op);
    }
    for (const Opcode op : {Opcode::LOOP_DN_I32_IMM, Opcode::LOOP_DN_I32, Opcode::LOOP_STEP_I32}) {
        const LoopRun down = runLoop(useSwitch(), op, kMin32 + 2, kMin32, -1);
        ASSERT_EQ(down.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(down.counter, kMin32) << bytecode::opcodeName(op);
        const LoopRun by5 = runLoop(useSwitch(), op, kMin32 + 7, kMin32, -5);
        EXPECT_EQ(by5.iterations, 2) << bytecode::opcodeName(op);
        EXPECT_EQ(by5.counter, kMin32 + 2) << bytecode::opcodeName(op);
        const LoopRun huge = runLoop(useSwitch(), op, kMax32, kMin32, kMin32);
        EXPECT_EQ(huge.iterations, 2) << bytecode::opcodeName(op);
        EXPECT_EQ(huge.counter, -1) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopWithTheStepInASlotEndsOnAZeroStep) {
    const LoopRun r = runLoop(useSwitch(), Opcode::LOOP_STEP_I32, 0, 10, 0);
    ASSERT_EQ(r.trap, Trap::None);
    EXPECT_EQ(r.iterations, 1);
    EXPECT_EQ(runLoop64(useSwitch(), 0, 10, 0).iterations, 1);
}

TEST_P(FusedOpsTest, Loop64CountsBothWaysWithoutOverflow) {
    const LoopRun64 up = runLoop64(useSwitch(), 0, 10, 3);
    ASSERT_EQ(up.trap, Trap::None);
    EXPECT_EQ(up.iterations, 4);
    EXPECT_EQ(up.counter, 9);
    const LoopRun64 down = runLoop64(useSwitch(), 10, -10, -7); // 10 3 -4
    EXPECT_EQ(down.iterations, 3);
    EXPECT_EQ(down.counter, -4);
    const LoopRun64 top = runLoop64(useSwitch(), kMax64 - 7, kMax64, 5);
    EXPECT_EQ(top.iterations, 2);
    EXPECT_EQ(top.counter, kMax64 - 2);
    const LoopRun64 bottom = runLoop64(useSwitch(), kMin64 + 7, kMin64, -5);
    EXPECT_EQ(bottom.iterations, 2);
    EXPECT_EQ(bottom.counter, kMin64 + 2);
    // The room from the minimum to the maximum does not fit in an int64.
    const LoopRun64 wide = runLoop64(useSwitch(), kMin64, kMax64, kMax64);
    EXPECT_EQ(wide.iterations, 3);
    EXPECT_EQ(wide.counter, kMax64 - 1);
    const LoopRun64 wideDown = runLoop64(useSwitch(), kMax64, kMin64, kMin64);
    EXPECT_EQ(wideDown.iterations, 2);
    EXPECT_EQ(wideDown.counter, -1);
}

TEST_P(FusedOpsTest, LoopBackEdgeCountsAgainstTheBudget) {
    const LoopRun r = runLoop(useSwitch(), Opcode::LOOP_I32_IMM, 0, 1000000, 1, 100);
    EXPECT_EQ(r.trap, Trap::BudgetExceeded);
    EXPECT_LT(r.counter, 1000);
}

// LDX_*: array of 4-byte elements at this+32 with lower bound -2 and 5 elements; the element
// index at this+0, the loaded value at this+8.
Trap loadElement(bool useSwitch, Opcode op, std::int32_t index, std::uint32_t fieldOffset, TestProgram& p) {
    for (std::int32_t k = 0; k < 5; ++k) {
        p.set<std::int32_t>(32 + 4 * k, 0x01020304 * (k + 1));
    }
    p.set<std::int32_t>(0, index);
    Asm a;
    a.op(op, {self(8), self(32 + fieldOffset), self(0), imm(-2), 4, 5});
    a.op(Opcode::RET);
    p.setMain(a);
    return p.run(useSwitch);
}

TEST_P(FusedOpsTest, ElementLoadChecksTheBoundsAndReadsTheWidth) {
    for (std::int32_t index = -2; index <= 2; ++index) {
        const std::int32_t element = 0x01020304 * (index + 3);
        TestProgram p32;
        ASSERT_EQ(loadElement(useSwitch(), Opcode::LDX_32, index, 0, p32), Trap::None);
        EXPECT_EQ(p32.get<std::int32_t>(8), element);
        TestProgram p16;
        ASSERT_EQ(loadElement(useSwitch(), Opcode::LDX_16, index, 2, p16), Trap::None);
        EXPECT_EQ(p16.get<std::uint16_t>(8), static_cast<std::uint16_t>(static_cast<std::uint32_t>(element) >> 16));
        TestProgram p8;
        ASSERT_EQ(loadElement(useSwitch(), Opcode::LDX_8, index, 1, p8), Trap::None);
        EXPECT_EQ(p8.get<std::uint8_t>(8), static_cast<std::uint8_t>(static_cast<std::uint32_t>(element) >> 8));
    }
    for (const std::int32_t bad : {-3, 3, kMin32, kMax32}) {
        TestProgram p;
        p.set<std::int32_t>(8, 77);
        EXPECT_EQ(loadElement(useSwitch(), Opcode::LDX_32, bad, 0, p), Trap::ArrayBounds) << bad;
        EXPECT_EQ(p.get<std::int32_t>(8), 77) << bad; // nothing written
    }
}

TEST_P(FusedOpsTest, ElementLoad64ReadsEightBytes) {
    TestProgram p;
    p.set<std::int64_t>(40, -1234567890123LL);
    p.set<std::int32_t>(0, 1);
    Asm a;
    a.op(Opcode::LDX_64, {self(8), self(32), self(0), imm(0), 8, 2});
    a.op(Opcode::RET);
    p.setMain(a);
    ASSERT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int64_t>(8), -1234567890123LL);
}

// d := a op i through the reciprocal, compared with C++'s / and % (truncating, sign of a).
std::int32_t divImm(bool useSwitch, Opcode op, std::int32_t a, std::int32_t divisor) {
    TestProgram p;
    Asm as;
    const bool isSigned = op == Opcode::DIV_I32_IMM || op == Opcode::MOD_I32_IMM;
    const std::uint64_t r = bytecode::divisorReciprocal(isSigned ? bytecode::divisorMagnitude(divisor)
                                                                 : static_cast<std::uint32_t>(divisor));
    as.op(op, {self(0), self(8), imm(divisor), Asm::lo(static_cast<std::int64_t>(r)),
               Asm::hi(static_cast<std::int64_t>(r))});
    as.op(Opcode::RET);
    p.setMain(as);
    p.set<std::int32_t>(8, a);
    EXPECT_EQ(p.run(useSwitch), Trap::None);
    return p.get<std::int32_t>(0);
}

TEST_P(FusedOpsTest, DivisionByAConstantMatchesTheDivideInstruction) {
    constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
    constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
    const std::int32_t values[] = {0,       1,         -1,         2,    -2,       3,     7,
                                   -7,      255,       256,        -256, 65520,    65521, 1000002,
                                   1000003, 123456789, -123456789, kMax, kMax - 1, kMin,  kMin + 1};
    const std::int32_t divisors[] = {1, -1, 2, -2, 3, -3, 7, 10, 256, -256, 65521, 1000003, 0x40000000, kMax, kMin};
    for (const std::int32_t d : divisors) {
        for (const std::int32_t a : values) {
            const std::int32_t mod = d == -1 ? 0 : a % d;
            EXPECT_EQ(divImm(useSwitch(), Opcode::MOD_I32_IMM, a, d), mod) << a << " MOD " << d;
            if (d != 1 && d != -1) {
                EXPECT_EQ(divImm(useSwitch(), Opcode::DIV_I32_IMM, a, d), a / d) << a << " / " << d;
            }
            const auto ua = static_cast<std::uint32_t>(a);
            const auto ud = static_cast<std::uint32_t>(d);
            EXPECT_EQ(static_cast<std::uint32_t>(divImm(useSwitch(), Opcode::MOD_U32_IMM, a, d)), ua % ud)
                << ua << " MOD " << ud;
            if (ud >= 2) {
                EXPECT_EQ(static_cast<std::uint32_t>(divImm(useSwitch(), Opcode::DIV_U32_IMM, a, d)), ua / ud)
                    << ua << " / " << ud;
            }
        }
    }
}

// Runs `if a op b goto taken` with a, b of type T; true when the jump was taken.
template <typename T> bool jumps(bool useSwitch, Opcode op, T a, T b) {
    TestProgram p;
    Asm as;
    as.op(Opcode::MOVI_32, {self(0), imm(0)});
    const std::uint32_t j = as.op(op, {self(8), self(16), 0});
    as.op(Opcode::RET);
    as.patch(j, 2, as.here());
    as.op(Opcode::MOVI_32, {self(0), imm(1)});
    as.op(Opcode::RET);
    p.setMain(as);
    p.set<T>(8, a);
    p.set<T>(16, b);
    EXPECT_EQ(p.run(useSwitch), Trap::None);
    return p.get<std::int32_t>(0) == 1;
}

template <typename T> void checkRealBranches(bool useSwitch, const std::array<Opcode, 6>& ops) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const std::pair<T, T> cases[] = {{1, 2}, {2, 1}, {1, 1}, {nan, 1}, {1, nan}, {-0.0, 0.0}};
    for (const auto& [a, b] : cases) {
        EXPECT_EQ(jumps(useSwitch, ops[0], a, b), a == b) << a << " " << b;
        EXPECT_EQ(jumps(useSwitch, ops[1], a, b), a != b) << a << " " << b;
        EXPECT_EQ(jumps(useSwitch, ops[2], a, b), a < b) << a << " " << b;
        EXPECT_EQ(jumps(useSwitch, ops[3], a, b), a <= b) << a << " " << b;
        EXPECT_EQ(jumps(useSwitch, ops[4], a, b), !(a < b)) << a << " " << b;
        EXPECT_EQ(jumps(useSwitch, ops[5], a, b), !(a <= b)) << a << " " << b;
    }
}

TEST_P(FusedOpsTest, RealCompareAndBranchFollowsIeeeIncludingNaN) {
    checkRealBranches<float>(useSwitch(), {Opcode::JEQ_F32, Opcode::JNE_F32, Opcode::JLT_F32, Opcode::JLE_F32,
                                           Opcode::JNLT_F32, Opcode::JNLE_F32});
    checkRealBranches<double>(useSwitch(), {Opcode::JEQ_F64, Opcode::JNE_F64, Opcode::JLT_F64, Opcode::JLE_F64,
                                            Opcode::JNLT_F64, Opcode::JNLE_F64});
}

TAKT_VM_BOTH_DISPATCH_MODES(FusedOpsTest);

} // namespace
} // namespace takt::vm::test
