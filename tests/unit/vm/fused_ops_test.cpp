// The fused instructions the back end emits for hot paths, in both dispatch modes: FOR
// back-edges (test, step and jump in one dispatch), division by a constant through its
// reciprocal, REAL compare-and-branch, array element loads, stores and copies, multiply-add;
// and the verifier's refusal of the operands these instructions trust.
#include "vm_test_util.h"

#include "takt/bytecode/verifier.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
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

// Widening element loads: bytes 0x80 0x7F 0xFF 0x01 and halves 0x8001 0x7FFE at this+32, the
// index at this+0, the result at this+8 (4 bytes).
Trap loadWidened(bool useSwitch, Opcode op, std::int32_t index, TestProgram& p) {
    const bool half = op == Opcode::LDX_S16 || op == Opcode::LDX_U16;
    if (half) {
        p.set<std::uint16_t>(32, 0x8001);
        p.set<std::uint16_t>(34, 0x7FFE);
    } else {
        const std::uint8_t bytes[] = {0x80, 0x7F, 0xFF, 0x01};
        for (std::uint32_t k = 0; k < 4; ++k) {
            p.set<std::uint8_t>(32 + k, bytes[k]);
        }
    }
    p.set<std::int32_t>(0, index);
    p.set<std::int32_t>(8, 77);
    Asm a;
    a.op(op, {self(8), self(32), self(0), imm(1), half ? 2u : 1u, half ? 2u : 4u});
    a.op(Opcode::RET);
    p.setMain(a);
    return p.run(useSwitch);
}

TEST_P(FusedOpsTest, WideningElementLoadsExtendBySignedness) {
    const std::pair<Opcode, std::array<std::int32_t, 4>> cases[] = {
        {Opcode::LDX_S8, {-128, 127, -1, 1}},
        {Opcode::LDX_U8, {128, 127, 255, 1}},
        {Opcode::LDX_S16, {-32767, 32766, 0, 0}},
        {Opcode::LDX_U16, {0x8001, 0x7FFE, 0, 0}},
    };
    for (const auto& [op, expected] : cases) {
        const bool half = op == Opcode::LDX_S16 || op == Opcode::LDX_U16;
        const std::int32_t count = half ? 2 : 4;
        for (std::int32_t k = 0; k < count; ++k) {
            TestProgram p;
            ASSERT_EQ(loadWidened(useSwitch(), op, k + 1, p), Trap::None) << bytecode::opcodeName(op);
            EXPECT_EQ(p.get<std::int32_t>(8), expected[static_cast<std::size_t>(k)])
                << bytecode::opcodeName(op) << " element " << k;
        }
        for (const std::int32_t bad : {0, count + 1, kMin32, kMax32}) {
            TestProgram p;
            EXPECT_EQ(loadWidened(useSwitch(), op, bad, p), Trap::ArrayBounds) << bytecode::opcodeName(op) << bad;
            EXPECT_EQ(p.get<std::int32_t>(8), 77) << bytecode::opcodeName(op); // nothing written
        }
    }
}

// STX_*: 5 elements of 8 bytes at this+32 (lower bound -2), the index at this+0, the value at
// this+16; the store goes to the field at `fieldOffset` inside the element.
Trap storeElement(bool useSwitch, Opcode op, std::int32_t index, std::uint32_t fieldOffset, TestProgram& p) {
    p.set<std::int32_t>(0, index);
    p.set<std::uint64_t>(16, 0x1122334455667788ULL);
    Asm a;
    a.op(op, {self(16), self(32 + fieldOffset), self(0), imm(-2), 8, 5});
    a.op(Opcode::RET);
    p.setMain(a);
    return p.run(useSwitch);
}

TEST_P(FusedOpsTest, ElementStoreChecksTheBoundsAndWritesTheWidth) {
    const std::pair<Opcode, std::uint32_t> widths[] = {
        {Opcode::STX_8, 1}, {Opcode::STX_16, 2}, {Opcode::STX_32, 4}, {Opcode::STX_64, 8}};
    for (const auto& [op, width] : widths) {
        for (std::int32_t index = -2; index <= 2; ++index) {
            TestProgram p;
            const std::uint32_t field = 8 - width; // the last field of the element
            ASSERT_EQ(storeElement(useSwitch(), op, index, field, p), Trap::None) << bytecode::opcodeName(op);
            for (std::uint32_t b = 0; b < 40; ++b) {
                const std::uint32_t element = static_cast<std::uint32_t>(index + 2) * 8;
                const bool written = b >= element + field && b < element + 8;
                const std::uint8_t expected =
                    written ? static_cast<std::uint8_t>(0x1122334455667788ULL >> (8 * (b - element - field))) : 0;
                EXPECT_EQ(p.get<std::uint8_t>(32 + b), expected) << bytecode::opcodeName(op) << " byte " << b;
            }
        }
        for (const std::int32_t bad : {-3, 3, kMin32, kMax32}) {
            TestProgram p;
            EXPECT_EQ(storeElement(useSwitch(), op, bad, 0, p), Trap::ArrayBounds) << bytecode::opcodeName(op) << bad;
            for (std::uint32_t b = 0; b < 48; ++b) { // nothing written, not even past the array
                EXPECT_EQ(p.get<std::uint8_t>(32 + b), 0) << bytecode::opcodeName(op) << " byte " << b;
            }
        }
    }
}

// LDX_N / STX_N: 3 elements of 12 bytes at this+64 (lower bound 1), a 12-byte value at this+16.
TEST_P(FusedOpsTest, ElementCopiesMoveWholeElementsAndCheckTheBounds) {
    for (std::int32_t index = 1; index <= 3; ++index) {
        TestProgram p;
        for (std::uint32_t b = 0; b < 36; ++b) {
            p.set<std::uint8_t>(64 + b, static_cast<std::uint8_t>(b + 1));
        }
        p.set<std::int32_t>(0, index);
        Asm a;
        a.op(Opcode::LDX_N, {self(16), self(64), self(0), imm(1), 12, 3}); // value := a[index]
        a.op(Opcode::STX_N, {self(16), self(64), self(4), imm(1), 12, 3}); // a[index2] := value
        a.op(Opcode::RET);
        p.set<std::int32_t>(4, 4 - index); // the mirror element
        p.setMain(a);
        ASSERT_EQ(p.run(useSwitch()), Trap::None);
        const auto from = static_cast<std::uint32_t>(index - 1) * 12;
        const auto to = static_cast<std::uint32_t>(3 - index) * 12;
        for (std::uint32_t b = 0; b < 12; ++b) {
            EXPECT_EQ(p.get<std::uint8_t>(16 + b), from + b + 1) << index;
            EXPECT_EQ(p.get<std::uint8_t>(64 + to + b), from + b + 1) << index;
        }
    }
    for (const Opcode op : {Opcode::LDX_N, Opcode::STX_N}) {
        for (const std::int32_t bad : {0, 4, kMin32, kMax32}) {
            TestProgram p;
            p.set<std::int32_t>(0, bad);
            p.set<std::uint32_t>(16, 0xABCDEF01u);
            Asm a; // same operand layout: the value (destination or source), then IDX's operands
            a.op(op, {self(16), self(64), self(0), imm(1), 12, 3});
            a.op(Opcode::RET);
            p.setMain(a);
            EXPECT_EQ(p.run(useSwitch()), Trap::ArrayBounds) << bytecode::opcodeName(op) << bad;
            EXPECT_EQ(p.get<std::uint32_t>(16), 0xABCDEF01u); // nothing written
            for (std::uint32_t b = 0; b < 48; ++b) {
                EXPECT_EQ(p.get<std::uint8_t>(64 + b), 0) << bytecode::opcodeName(op) << " byte " << b;
            }
        }
    }
}

// The copies of COPY, LDX_N and STX_N behave as memmove for every length, overlapping or not.
TEST_P(FusedOpsTest, CopiesOfEveryLengthMatchMemmove) {
    for (std::uint32_t n = 1; n <= 40; ++n) {
        for (const std::int32_t shift : {-5, -1, 0, 1, 3, 17, 64}) {
            TestProgram p;
            std::array<std::uint8_t, 160> expected{};
            for (std::uint32_t b = 0; b < expected.size(); ++b) {
                expected[b] = static_cast<std::uint8_t>(b * 7 + 1);
                p.set<std::uint8_t>(100 + b, expected[b]);
            }
            const std::uint32_t src = 140;
            const auto dst = static_cast<std::uint32_t>(static_cast<std::int32_t>(src) + shift);
            std::memmove(expected.data() + (dst - 100), expected.data() + (src - 100), n);
            Asm a;
            a.op(Opcode::COPY, {self(dst), self(src), n});
            a.op(Opcode::RET);
            p.setMain(a);
            ASSERT_EQ(p.run(useSwitch()), Trap::None);
            for (std::uint32_t b = 0; b < expected.size(); ++b) {
                ASSERT_EQ(p.get<std::uint8_t>(100 + b), expected[b])
                    << "n " << n << " shift " << shift << " byte " << b;
            }
        }
    }
}

// LOOP_I16_IMM / LOOP_DN_I16_IMM: counter slot at this+0, the INT variable at this+4, the sum of
// the variable as the body saw it at this+8, iterations at this+12.
struct Loop16Run {
    Trap trap;
    std::int32_t counter;
    std::int16_t variable;
    std::int32_t sum;
    std::int32_t iterations;
};

Loop16Run runLoop16(bool useSwitch, Opcode op, std::int32_t from, std::int32_t bound, std::int32_t step,
                    std::uint64_t budget = 0) {
    TestProgram p;
    Asm a;
    a.op(Opcode::MOVI_32, {self(0), imm(from)});
    a.op(Opcode::MOVI_16, {self(4), imm(from)}); // the back end stores the start value before the loop
    const std::uint32_t top = a.here();
    a.op(Opcode::SX_16_32, {self(16), self(4)});
    a.op(Opcode::ADD_I32, {self(8), self(8), self(16)});
    a.op(Opcode::ADD_I32_IMM, {self(12), self(12), imm(1)});
    a.op(op, {self(0), self(4), imm(static_cast<std::int32_t>(std::int64_t{bound} - step)), imm(step), top});
    a.op(Opcode::RET);
    p.setMain(a);
    p.budget = budget;
    const Trap t = p.run(useSwitch);
    return {t, p.get<std::int32_t>(0), p.get<std::int16_t>(4), p.get<std::int32_t>(8), p.get<std::int32_t>(12)};
}

TEST_P(FusedOpsTest, IntLoopStoresEachValueIntoTheVariable) {
    const Loop16Run up = runLoop16(useSwitch(), Opcode::LOOP_I16_IMM, 1, 10, 1);
    ASSERT_EQ(up.trap, Trap::None);
    EXPECT_EQ(up.sum, 55); // the body saw 1 … 10 in the variable
    EXPECT_EQ(up.iterations, 10);
    EXPECT_EQ(up.counter, 10);
    EXPECT_EQ(up.variable, 10);                                                   // the last value the body ran with
    const Loop16Run by3 = runLoop16(useSwitch(), Opcode::LOOP_I16_IMM, 0, 10, 3); // 0 3 6 9
    EXPECT_EQ(by3.sum, 18);
    EXPECT_EQ(by3.variable, 9);
    const Loop16Run down = runLoop16(useSwitch(), Opcode::LOOP_DN_I16_IMM, 10, -5, -4); // 10 6 2 -2
    ASSERT_EQ(down.trap, Trap::None);
    EXPECT_EQ(down.sum, 16);
    EXPECT_EQ(down.iterations, 4);
    EXPECT_EQ(down.variable, -2);
    EXPECT_EQ(down.counter, -2);
}

TEST_P(FusedOpsTest, IntLoopEndsAtTheLimitsOfInt) {
    const Loop16Run top = runLoop16(useSwitch(), Opcode::LOOP_I16_IMM, 32760, 32767, 5); // 32760 32765
    ASSERT_EQ(top.trap, Trap::None);
    EXPECT_EQ(top.iterations, 2);
    EXPECT_EQ(top.variable, 32765);
    const Loop16Run max = runLoop16(useSwitch(), Opcode::LOOP_I16_IMM, 32766, 32767, 1);
    EXPECT_EQ(max.iterations, 2);
    EXPECT_EQ(max.variable, 32767);
    const Loop16Run bottom = runLoop16(useSwitch(), Opcode::LOOP_DN_I16_IMM, -32766, -32768, -1);
    EXPECT_EQ(bottom.iterations, 3);
    EXPECT_EQ(bottom.variable, -32768);
}

TEST_P(FusedOpsTest, IntLoopBackEdgeCountsAgainstTheBudget) {
    const Loop16Run r = runLoop16(useSwitch(), Opcode::LOOP_I16_IMM, 0, 30000, 1, 100);
    EXPECT_EQ(r.trap, Trap::BudgetExceeded);
    EXPECT_LT(r.iterations, 1000);
    EXPECT_EQ(r.variable, r.counter); // stored with every step, also when the budget stops it
}

// MULADD_*: the product is rounded before the addition, so the result is the one of MUL then ADD
// even where a fused multiply-add would keep the low bits of the product.
TEST_P(FusedOpsTest, MultiplyAddRoundsTheProductFirst) {
    {
        TestProgram p;
        const float x = 1.0F + std::ldexp(1.0F, -12); // x * x = 1 + 2^-11 + 2^-24: the 2^-24 is lost
        p.set<float>(8, x);
        p.set<float>(12, -(1.0F + std::ldexp(1.0F, -11)));
        p.set<float>(16, 2.5F);
        p.set<float>(20, 4.0F);
        Asm a;
        a.op(Opcode::MULADD_F32, {self(0), self(8), self(8), self(12)});
        a.op(Opcode::MULADD_F32, {self(4), self(16), self(20), self(16)}); // 2.5 * 4 + 2.5
        a.op(Opcode::RET);
        p.setMain(a);
        ASSERT_EQ(p.run(useSwitch()), Trap::None);
        EXPECT_EQ(p.get<float>(0), 0.0F);
        EXPECT_EQ(p.get<float>(4), 12.5F);
    }
    {
        TestProgram p;
        const double x = 1.0 + std::ldexp(1.0, -27); // x * x = 1 + 2^-26 + 2^-54
        p.set<double>(16, x);
        p.set<double>(24, -(1.0 + std::ldexp(1.0, -26)));
        p.set<double>(32, std::numeric_limits<double>::infinity());
        Asm a;
        a.op(Opcode::MULADD_F64, {self(0), self(16), self(16), self(24)});
        a.op(Opcode::MULADD_F64, {self(8), self(32), self(24), self(32)}); // -inf + inf
        a.op(Opcode::RET);
        p.setMain(a);
        ASSERT_EQ(p.run(useSwitch()), Trap::None);
        EXPECT_EQ(p.get<double>(0), 0.0);
        EXPECT_TRUE(std::isnan(p.get<double>(8)));
    }
}

// The verifier's checks that let these instructions skip run-time checks: the array operand
// covers every element the bounds admit, a store does not write the constants, a FOR step
// points the instruction's way.
bytecode::VerifyResult verifyMain(const Asm& a) {
    TestProgram p;
    p.module.initImage.assign(kConst + kGlobals, 0);
    p.setMain(a);
    return bytecode::verify(p.module);
}

TEST(FusedOpsVerifier, AcceptsArrayOperandsThatCoverEveryElement) {
    // 10 elements of 8 bytes ending at the instance end (1024); a field at +4 of 4 bytes.
    for (const Opcode op : {Opcode::LDX_32, Opcode::LDX_S16, Opcode::LDX_U8}) {
        Asm a;
        a.op(op, {self(0), self(944 + 4), self(4), imm(0), 8, 10});
        a.op(Opcode::RET);
        const auto r = verifyMain(a);
        EXPECT_TRUE(r.ok()) << bytecode::opcodeName(op) << ": " << r.message;
    }
    Asm a;
    a.op(Opcode::STX_64, {self(8), self(944), self(0), imm(0), 8, 10});
    a.op(Opcode::LDX_N, {self(0), self(944), self(8), imm(0), 8, 10});
    a.op(Opcode::STX_N, {self(0), self(944), self(8), imm(0), 8, 10});
    a.op(Opcode::RET);
    const auto r = verifyMain(a);
    EXPECT_TRUE(r.ok()) << r.message;
}

TEST(FusedOpsVerifier, RejectsAnArrayOperandShorterThanItsElements) {
    struct Case {
        Opcode op;
        std::initializer_list<std::uint32_t> operands;
    };
    // Each array operand ends one byte past the instance (1024 bytes) at its last element.
    const Case cases[] = {
        {Opcode::LDX_32, {self(0), self(945 + 4), self(4), imm(0), 8, 10}},
        {Opcode::LDX_64, {self(0), self(945), self(4), imm(0), 8, 10}},
        {Opcode::LDX_S8, {self(0), self(1024 - 9 * 8), self(4), imm(0), 8, 10}},
        {Opcode::LDX_U16, {self(0), self(1024 - 9 * 8 - 1), self(4), imm(0), 8, 10}},
        {Opcode::STX_16, {self(4), self(1024 - 9 * 8 - 1), self(0), imm(0), 8, 10}},
        {Opcode::STX_64, {self(8), self(945), self(0), imm(0), 8, 10}},
        {Opcode::LDX_N, {self(0), self(945), self(8), imm(0), 8, 10}},
        {Opcode::STX_N, {self(0), self(945), self(8), imm(0), 8, 10}},
        {Opcode::LDX_32, {self(0), self(0), self(4), imm(0), 0x40000000u, 0x40000000u}}, // no 64-bit wrap
    };
    for (const Case& c : cases) {
        Asm a;
        a.op(c.op, c.operands);
        a.op(Opcode::RET);
        const auto r = verifyMain(a);
        EXPECT_EQ(r.code, bytecode::VerifyError::OperandRange) << bytecode::opcodeName(c.op) << ": " << r.message;
    }
}

TEST(FusedOpsVerifier, RejectsAnElementStoreIntoTheConstants) {
    for (const Opcode op : {Opcode::STX_32, Opcode::STX_N}) {
        Asm a;
        a.op(op, {self(4), abs(8), self(0), imm(0), 4, 2});
        a.op(Opcode::RET);
        const auto r = verifyMain(a);
        EXPECT_EQ(r.code, bytecode::VerifyError::ConstantWrite) << bytecode::opcodeName(op) << ": " << r.message;
    }
}

TEST(FusedOpsVerifier, RejectsAnIntLoopStepAgainstItsDirection) {
    auto verifyLoop = [](Opcode op, std::int32_t step) {
        Asm a;
        const std::uint32_t top = a.here();
        a.op(op, {self(0), self(4), imm(10), imm(step), top});
        a.op(Opcode::RET);
        return verifyMain(a);
    };
    EXPECT_TRUE(verifyLoop(Opcode::LOOP_I16_IMM, 2).ok());
    EXPECT_TRUE(verifyLoop(Opcode::LOOP_DN_I16_IMM, -2).ok());
    for (const std::int32_t bad : {0, -1, kMin32}) {
        EXPECT_EQ(verifyLoop(Opcode::LOOP_I16_IMM, bad).code, bytecode::VerifyError::Immediate) << bad;
    }
    for (const std::int32_t bad : {0, 1, kMax32}) {
        EXPECT_EQ(verifyLoop(Opcode::LOOP_DN_I16_IMM, bad).code, bytecode::VerifyError::Immediate) << bad;
    }
    Asm a; // the INT variable is a 2-byte destination inside its space
    a.op(Opcode::LOOP_I16_IMM, {self(0), self(1023), imm(10), imm(1), 0});
    a.op(Opcode::RET);
    EXPECT_EQ(verifyMain(a).code, bytecode::VerifyError::OperandRange);
}

TEST(FusedOpsVerifier, RejectsMultiplyAddOperandsOutsideTheirSpace) {
    Asm a;
    a.op(Opcode::MULADD_F64, {self(0), self(8), self(16), fr(252)}); // the frame has 256 bytes
    a.op(Opcode::RET);
    EXPECT_EQ(verifyMain(a).code, bytecode::VerifyError::OperandRange);
    Asm c;
    c.op(Opcode::MULADD_F32, {abs(8), self(8), self(16), self(24)}); // a constant as destination
    c.op(Opcode::RET);
    EXPECT_EQ(verifyMain(c).code, bytecode::VerifyError::ConstantWrite);
}

// d := a op i through the reciprocal, compared with C++'s / and % (truncating, sign of a).
std::int32_t divImm(bool useSwitch, Opcode op, std::int32_t a, std::int32_t divisor) {
    TestProgram p;
    Asm as;
    const bool isSigned = op == Opcode::DIV_I32_IMM || op == Opcode::MOD_I32_IMM;
    const std::uint64_t r = bytecode::divisorReciprocal(isSigned ? bytecode::divisorMagnitude(divisor)
                                                                 : static_cast<std::uint32_t>(divisor));
    // MOD_I32_IMM takes the divisor's magnitude (the sign of the result is the dividend's).
    const std::uint32_t word =
        op == Opcode::MOD_I32_IMM ? bytecode::divisorMagnitude(divisor) : static_cast<std::uint32_t>(divisor);
    as.op(op, {self(0), self(8), word, Asm::lo(static_cast<std::int64_t>(r)), Asm::hi(static_cast<std::int64_t>(r))});
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
