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

    const RunState rs{&p.module, &p.resolved, p.image.data(), static_cast<std::uint32_t>(p.image.size()),
                      0,         0,           nullptr,        &p.trap};
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

} // namespace
} // namespace takt::vm::test
