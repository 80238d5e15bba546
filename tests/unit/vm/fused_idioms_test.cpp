// The fused idioms, in both dispatch modes: ADDMOD_*_IMM (a ring-buffer index) gives what ADD
// then MOD_*_IMM give, ADDX_* (a running sum) what LDX_* then ADD_* give, including the sums
// that wrap and the element indices that trap, and MULW/DIVW/ADDW_F64 what F32_TO_F64 then the
// LREAL operation give.
#include "vm_test_util.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace takt::vm::test {
namespace {

class FusedIdiomsTest : public DispatchTest {};

constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();

// Runs `op` over a at this+8 and b at this+12 into this+0: either ADDMOD_*_IMM d, a, b, k or the
// pair ADD_I32 t, a, b; MOD_*_IMM d, t, k.
std::uint32_t ringIndex(bool useSwitch, bool fused, bool isSigned, std::int32_t a, std::int32_t b,
                        std::int32_t divisor) {
    const std::uint32_t word =
        isSigned ? bytecode::divisorMagnitude(divisor) : static_cast<std::uint32_t>(divisor); // MOD takes |d|
    const auto r = static_cast<std::int64_t>(bytecode::divisorReciprocal(word));
    TestProgram p;
    Asm as;
    if (fused) {
        as.op(isSigned ? Opcode::ADDMOD_I32_IMM : Opcode::ADDMOD_U32_IMM,
              {self(0), self(8), self(12), word, Asm::lo(r), Asm::hi(r)});
    } else {
        as.op(Opcode::ADD_I32, {self(16), self(8), self(12)});
        as.op(isSigned ? Opcode::MOD_I32_IMM : Opcode::MOD_U32_IMM, {self(0), self(16), word, Asm::lo(r), Asm::hi(r)});
    }
    as.op(Opcode::RET);
    p.setMain(as);
    p.set<std::int32_t>(8, a);
    p.set<std::int32_t>(12, b);
    EXPECT_EQ(p.run(useSwitch), Trap::None);
    return p.get<std::uint32_t>(0);
}

TEST_P(FusedIdiomsTest, RingIndexIsTheSumThenTheModulo) {
    const std::int32_t values[] = {0, 1, -1, 7, 255, 256, -256, 65536, 123456789, kMax32, kMin32, kMax32 - 3};
    const std::int32_t divisors[] = {1, 2, 7, 8, 256, 1000, 65537, -256, kMax32, kMin32};
    for (const std::int32_t d : divisors) {
        for (const std::int32_t a : values) {
            for (const std::int32_t b : {0, 1, 7, -9, kMax32, kMin32}) {
                for (const bool isSigned : {true, false}) {
                    EXPECT_EQ(ringIndex(useSwitch(), true, isSigned, a, b, d),
                              ringIndex(useSwitch(), false, isSigned, a, b, d))
                        << "(" << a << " + " << b << ") MOD " << d << (isSigned ? " signed" : " unsigned");
                }
            }
        }
    }
    // The values themselves, so the pair above is not trusted blindly: ring positions of a
    // negative sum keep the sign of the sum (IEC MOD), the unsigned sum wraps first.
    EXPECT_EQ(ringIndex(useSwitch(), true, true, 250, 10, 256), 4u);
    EXPECT_EQ(static_cast<std::int32_t>(ringIndex(useSwitch(), true, true, -3, 1, 256)), -2);
    EXPECT_EQ(ringIndex(useSwitch(), true, false, -1, 1, 256), 0u);
    EXPECT_EQ(ringIndex(useSwitch(), true, false, -1, 0, 1000), 0xFFFFFFFFu % 1000u);
}

// ADDX_*: T elements (indices -1..3) at this+64, the element index at this+0, the addend at
// this+8; the sum goes to this+16.
template <typename T>
Trap addElement(bool useSwitch, Opcode op, std::int32_t index, T addend, const T (&elements)[5], TestProgram& p) {
    for (std::uint32_t k = 0; k < 5; ++k) {
        p.set<T>(64 + k * sizeof(T), elements[k]);
    }
    p.set<std::int32_t>(0, index);
    p.set<T>(8, addend);
    Asm a;
    a.op(op, {self(16), self(64), self(0), imm(-1), static_cast<std::uint32_t>(sizeof(T)), 5, self(8)});
    a.op(Opcode::RET);
    p.setMain(a);
    return p.run(useSwitch);
}

TEST_P(FusedIdiomsTest, ElementAddReadsTheIndexedElement) {
    const float reals[5] = {0.5f, -1.25f, 1e30f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
    const double lreals[5] = {0.1, -2.5, 1e300, -0.0, 7.0};
    const std::int32_t dints[5] = {1, -2, kMax32, kMin32, 5};
    for (std::int32_t index = -1; index <= 3; ++index) {
        const auto k = static_cast<std::size_t>(index + 1);
        TestProgram pf;
        ASSERT_EQ(addElement(useSwitch(), Opcode::ADDX_F32, index, 0.25f, reals, pf), Trap::None);
        const float f = 0.25f + reals[k];
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(pf.get<float>(16)));
        } else {
            EXPECT_EQ(pf.get<float>(16), f) << index;
        }
        TestProgram pd;
        ASSERT_EQ(addElement(useSwitch(), Opcode::ADDX_F64, index, 1e-3, lreals, pd), Trap::None);
        EXPECT_EQ(pd.get<double>(16), 1e-3 + lreals[k]) << index;
        TestProgram pi;
        ASSERT_EQ(addElement(useSwitch(), Opcode::ADDX_I32, index, std::int32_t{1}, dints, pi), Trap::None);
        // DINT addition wraps (two's complement), as ADD_I32 does.
        EXPECT_EQ(pi.get<std::int32_t>(16), static_cast<std::int32_t>(static_cast<std::uint32_t>(dints[k]) + 1u))
            << index;
    }
}

TEST_P(FusedIdiomsTest, ElementAddOutOfBoundsTrapsAndWritesNothing) {
    const std::int32_t dints[5] = {1, 2, 3, 4, 5};
    for (const std::int32_t bad : {-2, 4, kMin32, kMax32}) {
        TestProgram p;
        p.set<std::int32_t>(16, 77);
        EXPECT_EQ(addElement(useSwitch(), Opcode::ADDX_I32, bad, std::int32_t{1}, dints, p), Trap::ArrayBounds) << bad;
        EXPECT_EQ(p.get<std::int32_t>(16), 77) << bad;
    }
}

// d := op(LREAL(a), b) with a REAL at this+8, b LREAL at this+16, into this+0; either fused or
// as F32_TO_F64 then the LREAL instruction.
double widened(bool useSwitch, Opcode fused, Opcode plain, float a, double b) {
    TestProgram p;
    Asm as;
    if (plain == Opcode::NOP) {
        as.op(fused, {self(0), self(8), self(16)});
    } else {
        as.op(Opcode::F32_TO_F64, {self(24), self(8)});
        as.op(plain, {self(0), self(24), self(16)});
    }
    as.op(Opcode::RET);
    p.setMain(as);
    p.set<float>(8, a);
    p.set<double>(16, b);
    EXPECT_EQ(p.run(useSwitch), Trap::None);
    return p.get<double>(0);
}

TEST_P(FusedIdiomsTest, WidenedRealArithmeticIsTheConversionThenTheOperation) {
    const float reals[] = {0.1F, -2.5F, 3.4028235e38F, 1e-45F, 0.0F, -0.0F};
    const double lreals[] = {3.0, 2.5, -1e-300, 1e308, 0.0, 7.0};
    const std::pair<Opcode, Opcode> ops[] = {
        {Opcode::MULW_F64, Opcode::MUL_F64}, {Opcode::DIVW_F64, Opcode::DIV_F64}, {Opcode::ADDW_F64, Opcode::ADD_F64}};
    for (const auto& [fused, plain] : ops) {
        for (const float a : reals) {
            for (const double b : lreals) {
                const double f = widened(useSwitch(), fused, Opcode::NOP, a, b);
                const double u = widened(useSwitch(), fused, plain, a, b);
                if (std::isnan(u)) {
                    EXPECT_TRUE(std::isnan(f)) << a << " " << b;
                } else {
                    EXPECT_EQ(std::memcmp(&f, &u, sizeof f), 0) << bytecode::opcodeName(fused) << " " << a << " " << b;
                }
            }
        }
    }
    // The widening is exact: REAL 0.1 is 0.100000001490116..., not LREAL 0.1.
    EXPECT_EQ(widened(useSwitch(), Opcode::MULW_F64, Opcode::NOP, 0.1F, 3.0), static_cast<double>(0.1F) * 3.0);
    EXPECT_NE(widened(useSwitch(), Opcode::MULW_F64, Opcode::NOP, 0.1F, 3.0), 0.1 * 3.0);
}

// d := a * b + c * e at this+0 from this+8.. (T each), fused or as MUL, MUL, ADD.
template <typename T> T twoProducts(bool useSwitch, bool fused, const std::array<T, 4>& v) {
    const bool single = sizeof(T) == 4;
    TestProgram p;
    Asm as;
    if (fused) {
        as.op(single ? Opcode::MUL2ADD_F32 : Opcode::MUL2ADD_F64, {self(0), self(8), self(16), self(24), self(32)});
    } else {
        as.op(single ? Opcode::MUL_F32 : Opcode::MUL_F64, {self(40), self(8), self(16)});
        as.op(single ? Opcode::MUL_F32 : Opcode::MUL_F64, {self(48), self(24), self(32)});
        as.op(single ? Opcode::ADD_F32 : Opcode::ADD_F64, {self(0), self(40), self(48)});
    }
    as.op(Opcode::RET);
    p.setMain(as);
    for (std::uint32_t k = 0; k < 4; ++k) {
        p.set<T>(8 + 8 * k, v[k]);
    }
    EXPECT_EQ(p.run(useSwitch), Trap::None);
    return p.get<T>(0);
}

// Both products are rounded before the sum: (1 + 2^-p) * (1 - 2^-p) + (-1) * 1 is -2^-2p with a
// fused multiply-add and 0 with the products rounded (p = 13 for REAL, 28 for LREAL).
TEST_P(FusedIdiomsTest, TwoProductsAreRoundedBeforeTheSum) {
    const float ef = 1.0F / 8192.0F;
    const std::array<float, 4> f = {1.0F + ef, 1.0F - ef, -1.0F, 1.0F};
    EXPECT_EQ(twoProducts(useSwitch(), true, f), twoProducts(useSwitch(), false, f));
    EXPECT_EQ(twoProducts(useSwitch(), true, f), 0.0F);
    const double ed = 1.0 / 268435456.0;
    const std::array<double, 4> d = {1.0 + ed, 1.0 - ed, -1.0, 1.0};
    EXPECT_EQ(twoProducts(useSwitch(), true, d), twoProducts(useSwitch(), false, d));
    EXPECT_EQ(twoProducts(useSwitch(), true, d), 0.0);
    const std::array<double, 4> filter = {0.7, 0.99, 0.3, 0.01};
    EXPECT_EQ(twoProducts(useSwitch(), true, filter), twoProducts(useSwitch(), false, filter));
}

TAKT_VM_BOTH_DISPATCH_MODES(FusedIdiomsTest);

} // namespace
} // namespace takt::vm::test
