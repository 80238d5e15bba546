// The fused instructions the back end emits for hot paths, in both dispatch modes: FOR
// back-edges (test, step and jump in one dispatch).
#include "vm_test_util.h"

#include <limits>

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

TAKT_VM_BOTH_DISPATCH_MODES(FusedOpsTest);

} // namespace
} // namespace takt::vm::test
