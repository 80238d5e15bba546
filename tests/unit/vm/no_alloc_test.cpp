// A run never allocates: this binary counts every operator new while a scan runs.
#include "vm_test_util.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include "../counting_new.h"

using takt::test::gAllocations;
using takt::test::gCounting;

namespace takt::vm::test {
namespace {

TEST(NoAllocation, ScansWithCallsNativesAndStringsDoNotAllocate) {
    TestProgram p;
    // A native TON at this+64 (fields as sema declares them) and a string CONCAT into this+300.
    auto addType = [&p](bytecode::ValueKind k, std::uint32_t size) {
        bytecode::TypeDesc t;
        t.kind = k;
        t.size = size;
        p.module.types.push_back(t);
        return static_cast<std::uint32_t>(p.module.types.size() - 1);
    };
    const std::uint32_t boolT = addType(bytecode::ValueKind::Bool, 1);
    const std::uint32_t timeT = addType(bytecode::ValueKind::Time, 8);
    bytecode::TypeDesc ton;
    ton.kind = bytecode::ValueKind::FunctionBlock;
    ton.size = 48;
    ton.fields = {{"IN", boolT, 0},         {"PT", timeT, 8},       {"Q", boolT, 16},     {"ET", timeT, 24},
                  {"StartTime", timeT, 32}, {"Running", boolT, 40}, {"PrevIn", boolT, 41}};
    p.module.types.push_back(ton);
    bytecode::PouEntry pou;
    pou.kind = bytecode::PouKind::Native;
    pou.instanceType = static_cast<std::uint32_t>(p.module.types.size() - 1);
    pou.native = static_cast<std::uint32_t>(bytecode::Native::Ton);
    p.module.pous.push_back(pou);

    Asm a;
    a.op(Opcode::MOVI_8, {self(64), 1});
    a.op(Opcode::CALL_FB, {1, self(64), 0});
    a.op(Opcode::ADDR, {fr(0), self(300)});
    a.op(Opcode::MOVI_32, {fr(4), 20});
    a.op(Opcode::ADDR, {fr(8), self(200)});
    a.op(Opcode::ADDR, {fr(16), self(250)});
    a.op(Opcode::CALL_NATIVE, {static_cast<std::uint32_t>(bytecode::Native::Concat), fr(0)});
    a.op(Opcode::RET);
    p.setMain(a);
    p.setString(200, "abc");
    p.setString(250, "def");
    resolveModule(p.module, p.resolved);

    const RunState rs{&p.module, &p.resolved, p.image.data(), static_cast<std::uint32_t>(p.image.size()), 0, 0, 0,
                      nullptr,   &p.trap,     nullptr};
    gAllocations = 0;
    gCounting = true;
    Trap t1 = execute<false>(rs, 0, kInst, kConst + kGlobals);
    Trap t2 = execute<true>(rs, 0, kInst, kConst + kGlobals);
    gCounting = false;
    EXPECT_EQ(t1, Trap::None);
    EXPECT_EQ(t2, Trap::None);
    EXPECT_EQ(gAllocations.load(), 0u);
    EXPECT_EQ(p.getString(300), "abcdef");

    // The counter itself sees allocations.
    gCounting = true;
    std::vector<std::string> control(3, std::string(100, 'x'));
    gCounting = false;
    EXPECT_EQ(control.size(), 3u);
    EXPECT_GE(gAllocations.load(), 1u);
}

// EQ_AGG (ASSERT_EQUAL on STRUCT/ARRAY) walks the type table in place: no allocation, in both
// dispatch modes, and the result is by value (bytes after a terminator do not count).
TEST(NoAllocation, AggregateComparisonDoesNotAllocate) {
    TestProgram p;
    bytecode::TypeDesc real;
    real.kind = bytecode::ValueKind::Real;
    real.size = 4;
    bytecode::TypeDesc text;
    text.kind = bytecode::ValueKind::String;
    text.size = 6;
    text.stringLength = 5;
    p.module.types.push_back(real); // 1
    p.module.types.push_back(text); // 2
    bytecode::TypeDesc rec;
    rec.kind = bytecode::ValueKind::Struct;
    rec.size = 12;
    rec.fields = {{"r", 1, 0}, {"s", 2, 4}};
    p.module.types.push_back(rec); // 3
    bytecode::TypeDesc arr;
    arr.kind = bytecode::ValueKind::Array;
    arr.size = 48;
    arr.element = 3;
    arr.bounds = {1, 4};
    p.module.types.push_back(arr); // 4

    Asm a;
    a.op(Opcode::EQ_AGG, {self(0), self(100), self(200), 4});
    a.op(Opcode::RET);
    p.setMain(a);
    p.setString(100 + 3 * 12 + 4, "ab");
    p.setString(200 + 3 * 12 + 4, "abcd");
    p.setString(200 + 3 * 12 + 4, "ab"); // "cd" stays behind the terminator
    p.set<float>(100 + 12, 0.0F);
    p.set<float>(200 + 12, -0.0F);
    resolveModule(p.module, p.resolved);
    const RunState rs{&p.module, &p.resolved, p.image.data(), static_cast<std::uint32_t>(p.image.size()), 0, 0, 0,
                      nullptr,   &p.trap,     nullptr};
    gAllocations = 0;
    gCounting = true;
    Trap t1 = execute<false>(rs, 0, kInst, kConst + kGlobals);
    const auto equalGoto = p.get<std::uint8_t>(0);
    p.set<std::uint8_t>(0, 7);
    Trap t2 = execute<true>(rs, 0, kInst, kConst + kGlobals);
    const auto equalSwitch = p.get<std::uint8_t>(0);
    p.set<float>(200 + 2 * 12, 1.0F); // element [3].r differs
    Trap t3 = execute<false>(rs, 0, kInst, kConst + kGlobals);
    gCounting = false;
    EXPECT_EQ(t1, Trap::None);
    EXPECT_EQ(t2, Trap::None);
    EXPECT_EQ(t3, Trap::None);
    EXPECT_EQ(equalGoto, 1);
    EXPECT_EQ(equalSwitch, 1);
    EXPECT_EQ(p.get<std::uint8_t>(0), 0);
    EXPECT_EQ(gAllocations.load(), 0u);
}

} // namespace
} // namespace takt::vm::test
