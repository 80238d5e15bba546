// The loop that can halt (execute<…, true>, takt/vm/debug.h) in both dispatch modes: it halts
// the running thread before a statement with a breakpoint, with the frame it stands in, and
// runs on from there when resumed; statements without one, and the other instructions, run
// as in the loop without the debugger.
#include "takt/vm/debug.h"

#include "vm_test_util.h"

#include <bit>
#include <ctime>
#include <future>

namespace takt::vm::test {
namespace {

std::int64_t deadlineIn(std::int64_t seconds) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (static_cast<std::int64_t>(ts.tv_sec) + seconds) * 1'000'000'000 + ts.tv_nsec;
}

// n := 0; REPEAT n := n + 1; UNTIL n >= 3 — three statements on lines 1, 2 and 3.
struct CountToThree : TestProgram {
    std::uint32_t increment = 0;
    std::uint32_t until = 0;
    CountToThree() {
        Asm a;
        a.op(Opcode::MOVI_32, {self(0), imm(0)});
        increment = a.op(Opcode::ADD_I32_IMM, {self(0), self(0), imm(1)});
        until = a.op(Opcode::JLT_I32_IMM, {self(0), imm(3), increment});
        a.op(Opcode::RET);
        setMain(a);
        module.files = {"count.st"};
        module.debug = {{0, 0, 1, 3, true}, {increment, 0, 2, 3, true}, {until, 0, 3, 3, true}};
    }
};

class DebugLoop : public DispatchTest {};

TEST_P(DebugLoop, HaltsBeforeTheStatementEachTimeAndRunsOn) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    dbg.attach();
    p.debugger = &dbg;
    ASSERT_TRUE(stops.setBreakpoint(p.increment, true));
    auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
    std::uint32_t seen = 0;
    for (std::int32_t n = 0; n < 3; ++n) {
        ASSERT_TRUE(dbg.waitHalted(seen, deadlineIn(10))) << "halt " << n;
        seen = dbg.haltCount();
        ASSERT_TRUE(dbg.halted());
        ASSERT_EQ(dbg.frames().size(), 1u);
        EXPECT_EQ(dbg.frames()[0].pc, p.increment);
        EXPECT_EQ(dbg.frames()[0].pou, 0u);
        EXPECT_EQ(dbg.frames()[0].thisOffset, kInst);
        EXPECT_EQ(sourceAt(p.module, dbg.frames()[0].pc).line, 2u);
        EXPECT_EQ(p.get<std::int32_t>(0), n); // not yet incremented
        ASSERT_TRUE(dbg.resume(StepMode::None));
    }
    ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(run.get(), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(0), 3);
    EXPECT_EQ(dbg.haltCount(), 3u);
    EXPECT_FALSE(dbg.resume(StepMode::None)); // not halted
}

TEST_P(DebugLoop, AStepHaltsAtEveryStatementAndNoWhereElse) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    dbg.attach();
    p.debugger = &dbg;
    dbg.pause();
    auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
    std::vector<std::uint32_t> lines;
    std::uint32_t seen = 0;
    for (int i = 0; i < 7; ++i) {
        ASSERT_TRUE(dbg.waitHalted(seen, deadlineIn(10))) << "halt " << i;
        seen = dbg.haltCount();
        lines.push_back(sourceAt(p.module, dbg.frames().back().pc).line);
        ASSERT_TRUE(dbg.resume(i < 6 ? StepMode::Over : StepMode::None));
    }
    ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(run.get(), Trap::None);
    EXPECT_EQ(lines, (std::vector<std::uint32_t>{1, 2, 3, 2, 3, 2, 3}));
    EXPECT_EQ(p.get<std::int32_t>(0), 3);
}

TEST_P(DebugLoop, BudgetAndResultsAsWithoutTheDebugger) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    p.debugger = &dbg; // not attached: never halts
    ASSERT_TRUE(stops.setBreakpoint(p.increment, true));
    p.budget = 2; // the second back-edge uses it up, as in the plain loop
    EXPECT_EQ(p.run(useSwitch()), Trap::BudgetExceeded);
    EXPECT_EQ(dbg.haltCount(), 0u);
    p.budget = 0;
    EXPECT_EQ(p.run(useSwitch()), Trap::None);
    EXPECT_EQ(p.get<std::int32_t>(0), 3);
}

// A hit condition is counted on the running thread: `>= 2` passes the first hit over and halts
// at the second and third; `2` at the second only.
TEST_P(DebugLoop, AHitConditionHaltsOnlyAtTheHitsItAdmits) {
    for (const char* text : {">= 2", "2"}) {
        CountToThree p;
        StopMap stops(p.module);
        Debugger dbg(stops);
        dbg.attach();
        p.debugger = &dbg;
        HitCondition hit;
        std::string why;
        ASSERT_TRUE(parseHitCondition(text, hit, why)) << why;
        const std::uint32_t slot = stops.addSlot(hit);
        ASSERT_LT(slot, StopMap::kSlots);
        ASSERT_TRUE(stops.setBreakpoint(p.increment, slot));
        auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
        std::vector<std::int32_t> seenAt;
        std::uint32_t seen = 0;
        while (dbg.waitHalted(seen, deadlineIn(1))) {
            seen = dbg.haltCount();
            seenAt.push_back(p.get<std::int32_t>(0));
            ASSERT_TRUE(dbg.resume(StepMode::None));
        }
        ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(run.get(), Trap::None);
        const std::vector<std::int32_t> expected =
            std::string_view(text) == "2" ? std::vector<std::int32_t>{1} : std::vector<std::int32_t>{1, 2};
        EXPECT_EQ(seenAt, expected) << text;
        EXPECT_EQ(stops.hits(slot), 3u);
    }
}

// n (the DINT at the instance's offset 0) as a debugger expression, and n = k.
DebugExpr loadN() {
    DebugExpr e;
    e.code = {ExprInstr{ExprOp::AddrThis, bytecode::ValueKind::Bool, bytecode::ValueKind::Bool, 0, 0, 0, {0}},
              ExprInstr{ExprOp::Load, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}}};
    e.kind = bytecode::ValueKind::DInt;
    e.depth = 1;
    return e;
}
DebugExpr nEquals(std::int64_t k) {
    DebugExpr e = loadN();
    ExprInstr c{ExprOp::Const, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}};
    c.imm.i = k;
    e.code.push_back(c);
    e.code.push_back(ExprInstr{ExprOp::Eq, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}});
    e.kind = bytecode::ValueKind::Bool;
    e.depth = 2;
    return e;
}

// A condition runs on the running thread against the instance it stands in: `n = 1` halts once.
TEST_P(DebugLoop, AConditionHaltsOnlyWhereItHolds) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    dbg.attach();
    p.debugger = &dbg;
    const DebugExpr condition = nEquals(1);
    const std::uint32_t slot = stops.addSlot(HitCondition{}, &condition);
    ASSERT_TRUE(stops.setBreakpoint(p.increment, slot));
    auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
    std::vector<std::int32_t> seenAt;
    std::uint32_t seen = 0;
    while (dbg.waitHalted(seen, deadlineIn(1))) {
        seen = dbg.haltCount();
        seenAt.push_back(p.get<std::int32_t>(0));
        ASSERT_TRUE(dbg.resume(StepMode::None));
    }
    ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(run.get(), Trap::None);
    EXPECT_EQ(seenAt, std::vector<std::int32_t>{1});
    EXPECT_EQ(stops.hits(slot), 1u) << "only the hits where the condition holds count";
}

// A logpoint never halts: each hit leaves a record of its values in the thread's ring; a full
// ring drops and counts.
TEST_P(DebugLoop, ALogpointRecordsItsValuesAndRunsOn) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    dbg.attach();
    p.debugger = &dbg;
    LogPoint log;
    log.id = 7;
    log.parts = {loadN(), nEquals(2)};
    ASSERT_TRUE(stops.setBreakpoint(p.increment, stops.addSlot(HitCondition{}, nullptr, &log)));
    EXPECT_EQ(p.run(useSwitch()), Trap::None); // on this thread: it would block if it halted
    EXPECT_EQ(dbg.haltCount(), 0u);
    LogRecord r;
    for (std::int64_t n = 0; n < 3; ++n) {
        ASSERT_TRUE(dbg.takeLog(r)) << n;
        EXPECT_EQ(r.id, 7u);
        ASSERT_EQ(r.count, 2u);
        EXPECT_EQ(r.status[0], ExprStatus::Ok);
        EXPECT_EQ(r.values[0].i, n);
        EXPECT_EQ(r.values[1].u, n == 2 ? 1u : 0u);
    }
    EXPECT_FALSE(dbg.takeLog(r));
    for (std::uint32_t i = 0; i < Debugger::kLogCapacity; ++i) {
        ASSERT_EQ(p.run(useSwitch()), Trap::None);
    }
    EXPECT_EQ(dbg.logsDropped(), 3u * Debugger::kLogCapacity - Debugger::kLogCapacity);
    std::uint32_t taken = 0;
    while (dbg.takeLog(r)) {
        ++taken;
    }
    EXPECT_EQ(taken, Debugger::kLogCapacity);
}

// Two breakpoints on one statement (a function breakpoint on the first statement of a line
// breakpoint): each keeps its own hit count and logs, and the statement halts when one says so.
// Before, the second replaced the first's slot.
TEST_P(DebugLoop, BreakpointsOnOneStatementEachCountAndLog) {
    for (const bool plainFirst : {false, true}) {
        CountToThree p;
        StopMap stops(p.module);
        Debugger dbg(stops);
        dbg.attach();
        p.debugger = &dbg;
        LogPoint log;
        log.id = 9;
        log.parts = {loadN()};
        HitCondition third;
        std::string why;
        ASSERT_TRUE(parseHitCondition("3", third, why)) << why;
        const std::uint32_t logging = stops.addSlot(HitCondition{}, nullptr, &log);
        std::uint32_t counting = StopMap::kSlots;
        if (plainFirst) {
            ASSERT_TRUE(stops.setBreakpoint(p.increment, true)); // halts every time
        } else {
            counting = stops.addSlot(third);
            ASSERT_TRUE(stops.setBreakpoint(p.increment, counting));
        }
        ASSERT_TRUE(stops.setBreakpoint(p.increment, logging));
        ASSERT_TRUE(stops.setBreakpoint(p.increment, logging)) << "set again, it is linked once";
        EXPECT_EQ(stops.breakpointCount(), 1u);
        auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
        std::vector<std::int32_t> haltedAt;
        std::uint32_t seen = 0;
        while (dbg.waitHalted(seen, deadlineIn(1))) {
            seen = dbg.haltCount();
            haltedAt.push_back(p.get<std::int32_t>(0));
            ASSERT_TRUE(dbg.resume(StepMode::None));
        }
        ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(run.get(), Trap::None);
        EXPECT_EQ(haltedAt, plainFirst ? (std::vector<std::int32_t>{0, 1, 2}) : (std::vector<std::int32_t>{2}))
            << "plain first: " << plainFirst;
        EXPECT_EQ(stops.hits(logging), 3u);
        if (counting != StopMap::kSlots) {
            EXPECT_EQ(stops.hits(counting), 3u);
        }
        LogRecord r;
        for (std::int64_t n = 0; n < 3; ++n) {
            ASSERT_TRUE(dbg.takeLog(r)) << n << " plain first: " << plainFirst;
            EXPECT_EQ(r.values[0].i, n);
        }
        EXPECT_FALSE(dbg.takeLog(r));
    }
}

// A condition that faults (here n / 0) halts the thread, as a plain breakpoint would, and says why.
TEST_P(DebugLoop, AConditionThatFaultsHaltsAndSaysWhy) {
    CountToThree p;
    StopMap stops(p.module);
    Debugger dbg(stops);
    dbg.attach();
    p.debugger = &dbg;
    DebugExpr condition = loadN();
    ExprInstr zero{ExprOp::Const, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}};
    condition.code.push_back(zero);
    condition.code.push_back(
        ExprInstr{ExprOp::Div, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}});
    ExprInstr one = zero;
    one.imm.i = 1;
    condition.code.push_back(one);
    condition.code.push_back(ExprInstr{ExprOp::Eq, bytecode::ValueKind::DInt, bytecode::ValueKind::DInt, 0, 0, 0, {0}});
    condition.depth = 2;
    const std::uint32_t slot = stops.addSlot(HitCondition{}, &condition);
    ASSERT_TRUE(stops.setBreakpoint(p.increment, slot));
    auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
    std::vector<ExprStatus> faults;
    std::uint32_t seen = 0;
    while (dbg.waitHalted(seen, deadlineIn(1))) {
        seen = dbg.haltCount();
        faults.push_back(dbg.conditionFault());
        ASSERT_TRUE(dbg.resume(StepMode::None));
    }
    ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(run.get(), Trap::None);
    EXPECT_EQ(faults, std::vector<ExprStatus>(3, ExprStatus::DivisionByZero));
    EXPECT_EQ(p.get<std::int32_t>(0), 3) << "the fault is the debugger's: the program runs on";

    // A plain halt after it says nothing of a fault.
    ASSERT_TRUE(stops.setBreakpoint(p.increment, false));
    ASSERT_TRUE(stops.setBreakpoint(p.increment, true));
    auto again = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
    ASSERT_TRUE(dbg.waitHalted(seen, deadlineIn(10)));
    seen = dbg.haltCount();
    EXPECT_EQ(dbg.conditionFault(), ExprStatus::Ok);
    ASSERT_TRUE(dbg.resume(StepMode::None));
    while (dbg.waitHalted(seen, deadlineIn(1))) {
        seen = dbg.haltCount();
        ASSERT_TRUE(dbg.resume(StepMode::None));
    }
    ASSERT_EQ(again.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

// q := 100 / d (line 1), then n := n + 1 (line 2): the DINTs at the instance's offsets 8, 4, 0.
struct Divide : TestProgram {
    std::uint32_t divide = 0;
    std::uint32_t increment = 0;
    Divide() {
        Asm a;
        a.op(Opcode::MOVI_32, {self(12), imm(100)});
        divide = a.op(Opcode::DIV_I32, {self(8), self(12), self(4)});
        increment = a.op(Opcode::ADD_I32_IMM, {self(0), self(0), imm(1)});
        a.op(Opcode::RET);
        setMain(a);
        module.files = {"divide.st"};
        module.debug = {{0, 0, 1, 3, true}, {increment, 0, 2, 3, true}};
    }
};

// An exception breakpoint halts at the faulting statement before the fault is reported, in the
// loop that can halt and in the plain one; a divisor fixed while halted lets the statement run
// again and on; continued unfixed, the same fault is reported as without a debugger.
TEST_P(DebugLoop, AnExceptionBreakpointHaltsAtTheStatementAndRunsItAgain) {
    for (const bool plain : {false, true}) {
        Divide p;
        StopMap stops(p.module);
        Debugger dbg(stops);
        dbg.attach();
        p.debugger = &dbg;
        p.plainLoop = plain;
        std::uint32_t traps = 0;
        ASSERT_TRUE(exceptionTraps("divide_by_zero", traps));
        stops.setTrapMask(traps);
        auto run = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
        ASSERT_TRUE(dbg.waitHalted(0, deadlineIn(10))) << plain;
        EXPECT_EQ(dbg.reason(), HaltReason::Exception);
        EXPECT_EQ(dbg.trap(), Trap::DivByZero);
        ASSERT_EQ(dbg.frames().size(), 1u);
        EXPECT_EQ(dbg.frames()[0].pc, 0u) << "the statement's start, not the faulting instruction";
        EXPECT_EQ(p.get<std::int32_t>(0), 0);
        p.set<std::int32_t>(4, 4); // the divisor, fixed while halted
        ASSERT_TRUE(dbg.resume(StepMode::None));
        ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(run.get(), Trap::None) << plain;
        EXPECT_EQ(p.get<std::int32_t>(8), 25);
        EXPECT_EQ(p.get<std::int32_t>(0), 1);
        EXPECT_EQ(dbg.haltCount(), 1u);

        // Unfixed: one halt, then the fault as it would be without the debugger.
        p.set<std::int32_t>(4, 0);
        auto unfixed = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
        ASSERT_TRUE(dbg.waitHalted(1, deadlineIn(10)));
        ASSERT_TRUE(dbg.resume(StepMode::None));
        ASSERT_EQ(unfixed.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(unfixed.get(), Trap::DivByZero);
        EXPECT_EQ(p.trap.codeOffset, p.divide);
        EXPECT_EQ(p.get<std::int32_t>(0), 1);
        EXPECT_EQ(dbg.haltCount(), 2u);

        // The next run faulting there halts again (the fault is a new one).
        auto next = std::async(std::launch::async, [&] { return p.run(useSwitch()); });
        ASSERT_TRUE(dbg.waitHalted(2, deadlineIn(10)));
        p.set<std::int32_t>(4, 10);
        ASSERT_TRUE(dbg.resume(StepMode::None));
        ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(next.get(), Trap::None);
        EXPECT_EQ(p.get<std::int32_t>(8), 10);
    }
}

// Without the filter, or without a client attached, a fault is reported at once.
TEST_P(DebugLoop, AFaultWithoutItsFilterIsReportedAtOnce) {
    for (const bool attached : {true, false}) {
        Divide p;
        StopMap stops(p.module);
        Debugger dbg(stops);
        if (attached) {
            dbg.attach();
        }
        p.debugger = &dbg;
        std::uint32_t traps = 0;
        ASSERT_TRUE(exceptionTraps(attached ? "bounds" : "all", traps));
        stops.setTrapMask(traps);
        EXPECT_EQ(p.run(useSwitch()), Trap::DivByZero); // on this thread: it would block if it halted
        EXPECT_EQ(dbg.haltCount(), 0u);
    }
}

TAKT_VM_BOTH_DISPATCH_MODES(DebugLoop);

TEST(ExceptionFilters, EveryFilterNamesItsTrapsAndAllNamesThemAll) {
    std::uint32_t all = 0;
    ASSERT_TRUE(exceptionTraps("all", all));
    std::uint32_t each = 0;
    for (const ExceptionFilter& f : kExceptionFilters) {
        if (f.id != "all") {
            EXPECT_NE(f.traps, 0u) << f.id;
            EXPECT_EQ(exceptionFilterOf(static_cast<Trap>(std::countr_zero(f.traps))), f.id);
            each |= f.traps;
        }
    }
    EXPECT_EQ(all, each);
    EXPECT_EQ(all & trapBit(Trap::BudgetExceeded), 0u) << "the watchdog's traps are no statement's fault";
    EXPECT_EQ(all & trapBit(Trap::Aborted), 0u);
    std::uint32_t t = 0;
    EXPECT_FALSE(exceptionTraps("division", t));
}

TEST(FunctionBreakpoint, ResolvesToThePousFirstStatementOrSaysWhy) {
    Divide p;
    bytecode::PouEntry fn;
    fn.name = "Motor.Start";
    fn.kind = bytecode::PouKind::Method;
    fn.code = static_cast<std::uint32_t>(p.module.code.size());
    fn.codeEnd = fn.code + 1;
    p.module.code.push_back(static_cast<std::uint32_t>(Opcode::RET));
    p.module.pous.push_back(fn);
    bytecode::PouEntry native;
    native.name = "TON";
    native.kind = bytecode::PouKind::FunctionBlock;
    p.module.pous.push_back(native);
    const ResolvedLine main = resolveFunction(p.module, "main");
    ASSERT_TRUE(main.verified) << main.reason;
    EXPECT_EQ(main.line, 1u);
    EXPECT_EQ(main.pcs, std::vector<std::uint32_t>{0});
    const ResolvedLine empty = resolveFunction(p.module, "Motor.Start");
    EXPECT_FALSE(empty.verified);
    EXPECT_NE(empty.reason.find("no statement"), std::string::npos) << empty.reason;
    const ResolvedLine none = resolveFunction(p.module, "Start");
    EXPECT_FALSE(none.verified);
    EXPECT_NE(none.reason.find("no POU named 'Start'"), std::string::npos) << none.reason;
    const ResolvedLine builtin = resolveFunction(p.module, "TON");
    EXPECT_FALSE(builtin.verified);
    EXPECT_NE(builtin.reason.find("built into takt"), std::string::npos) << builtin.reason;
}

TEST(HitCondition, ReadsTheFormsAClientWrites) {
    struct Case {
        const char* text;
        HitCondition::Op op;
        std::uint64_t n;
    };
    for (const Case& c : {Case{"5", HitCondition::Op::Eq, 5}, Case{" = 5", HitCondition::Op::Eq, 5},
                          Case{"==5", HitCondition::Op::Eq, 5}, Case{">= 5", HitCondition::Op::Ge, 5},
                          Case{">5", HitCondition::Op::Gt, 5}, Case{"<= 2", HitCondition::Op::Le, 2},
                          Case{"< 2", HitCondition::Op::Lt, 2}, Case{"% 10", HitCondition::Op::Every, 10}}) {
        HitCondition h;
        std::string why;
        ASSERT_TRUE(parseHitCondition(c.text, h, why)) << c.text << ": " << why;
        EXPECT_EQ(h.op, c.op) << c.text;
        EXPECT_EQ(h.n, c.n) << c.text;
    }
    const HitCondition every{HitCondition::Op::Every, 10};
    EXPECT_FALSE(every.admits(9));
    EXPECT_TRUE(every.admits(10));
    EXPECT_TRUE(every.admits(20));
    EXPECT_TRUE((HitCondition{HitCondition::Op::Ge, 5}).admits(6));
    EXPECT_FALSE((HitCondition{HitCondition::Op::Eq, 5}).admits(6));
    for (const char* bad : {"", "x", ">= ", "5 times", "% 0", "99999999999999999999999"}) {
        HitCondition h;
        std::string why;
        EXPECT_FALSE(parseHitCondition(bad, h, why)) << bad;
        EXPECT_NE(why.find("hit condition"), std::string::npos) << bad << ": " << why;
    }
    std::string why;
    HitCondition h;
    ASSERT_FALSE(parseHitCondition(">= 5x", h, why));
    EXPECT_NE(why.find("column 5"), std::string::npos) << why; // the x
}

} // namespace
} // namespace takt::vm::test
