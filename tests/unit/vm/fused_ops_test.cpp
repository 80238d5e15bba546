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

// counter at this+0, sum at this+4, bound slot at this+8: sum := sum + counter per iteration.
struct LoopRun {
    Trap trap;
    std::int32_t counter;
    std::int32_t sum;
};

LoopRun runLoop(bool useSwitch, Opcode op, std::int32_t from, std::int32_t bound, std::int32_t step,
                std::uint64_t budget = 0) {
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {self(0), imm(from)});
    a.op(Opcode::MOVI_32, {self(4), imm(0)});
    a.op(Opcode::MOVI_32, {self(8), imm(bound)});
    const std::uint32_t top = a.here();
    a.op(Opcode::ADD_I32, {self(4), self(4), self(0)});
    const bool slot = op == Opcode::LOOP_I32 || op == Opcode::LOOP_DN_I32;
    a.op(op, {self(0), slot ? self(8) : imm(bound), imm(step), top});
    a.op(Opcode::RET);
    p.setMain(a);
    p.budget = budget;
    const Trap t = p.run(useSwitch);
    return {t, p.get<std::int32_t>(0), p.get<std::int32_t>(4)};
}

TEST_P(FusedOpsTest, LoopCountingUpRunsUpToTheBoundAndStopsOnIt) {
    for (const Opcode op : {Opcode::LOOP_I32_IMM, Opcode::LOOP_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 1, 10, 1);
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.sum, 55) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 10) << bytecode::opcodeName(op); // tested before stepped
        const LoopRun by2 = runLoop(useSwitch(), op, 2, 10, 2);
        EXPECT_EQ(by2.sum, 2 + 4 + 6 + 8 + 10) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopCountingDownUsesTheNegativeStep) {
    for (const Opcode op : {Opcode::LOOP_DN_I32_IMM, Opcode::LOOP_DN_I32}) {
        const LoopRun r = runLoop(useSwitch(), op, 10, 1, -3);
        ASSERT_EQ(r.trap, Trap::None) << bytecode::opcodeName(op);
        EXPECT_EQ(r.sum, 10 + 7 + 4 + 1) << bytecode::opcodeName(op);
        EXPECT_EQ(r.counter, 1) << bytecode::opcodeName(op);
    }
}

TEST_P(FusedOpsTest, LoopUpToTheTypeLimitEndsWithoutOverflow) {
    constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
    constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
    const LoopRun up = runLoop(useSwitch(), Opcode::LOOP_I32_IMM, kMax - 2, kMax, 1);
    ASSERT_EQ(up.trap, Trap::None);
    EXPECT_EQ(up.counter, kMax);
    const LoopRun down = runLoop(useSwitch(), Opcode::LOOP_DN_I32, kMin + 2, kMin, -1);
    ASSERT_EQ(down.trap, Trap::None);
    EXPECT_EQ(down.counter, kMin);
}

TEST_P(FusedOpsTest, LoopBackEdgeCountsAgainstTheBudget) {
    const LoopRun r = runLoop(useSwitch(), Opcode::LOOP_I32_IMM, 0, 1000000, 1, 100);
    EXPECT_EQ(r.trap, Trap::BudgetExceeded);
    EXPECT_LT(r.counter, 1000);
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
