// Flow control on compiled ST (takt/vm/flow.h): the plan names what each statement of a POU reads
// and writes from its code; the recorder, filled by the thread that runs the POU in the loop that
// can halt, publishes per run how often each statement ran and the values it read (before it ran)
// and wrote (when it was done), the last execution winning.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <future>

#include "st_runner.h"
#include "takt/vm/debug.h"
#include "takt/vm/flow.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;
using testing::offsetOf;
using testing::pouNamed;

// Line numbers below are those of this text (line 1 is the empty line after R"().
const char* const kSource = R"(
FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  VAR calls : DINT; END_VAR
  calls := calls + 1;
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM Main
  VAR acc : Accum; other : Accum; i : DINT; sum : DINT; big : BOOL; arr : ARRAY [1..3] OF INT; END_VAR
  FOR i := 1 TO 3 DO
    acc(x := i, total => sum);
  END_FOR;
  other(x := 10);
  arr[2] := 7;
  IF sum > 1000 THEN
    big := TRUE;
  END_IF;
  arr[i - 1] := 5;
  sum := sum + Twice(i);
END_PROGRAM

FUNCTION Twice : DINT
  VAR_INPUT v : DINT; END_VAR
  Twice := 2 * v;
END_FUNCTION
)";
constexpr std::uint32_t kLineCalls = 6;
constexpr std::uint32_t kLineTotal = 7;
constexpr std::uint32_t kLineCall = 13;
constexpr std::uint32_t kLineOther = 15;
constexpr std::uint32_t kLineArr = 16;
constexpr std::uint32_t kLineIf = 17;
constexpr std::uint32_t kLineBig = 18;
constexpr std::uint32_t kLineIndexed = 20;
constexpr std::uint32_t kLineTwice = 21;

// The access of a statement on `line` named `name`, reading or writing (null when none).
const vm::FlowAccess* accessOn(const vm::FlowPlan& plan, std::uint32_t line, std::string_view name, bool written,
                               std::uint32_t* statement = nullptr) {
    for (std::uint32_t i = 0; i < plan.statements.size(); ++i) {
        const vm::FlowStatement& s = plan.statements[i];
        for (std::uint32_t k = s.firstAccess; s.line == line && k < s.firstAccess + s.accessCount; ++k) {
            if (plan.accesses[k].name == name && plan.accesses[k].written == written) {
                if (statement != nullptr) {
                    *statement = i;
                }
                return &plan.accesses[k];
            }
        }
    }
    return nullptr;
}

// Runs the program's cycles with a debugger attached and flow control on one POU.
struct Flow {
    Flow(Runner& r, std::string_view pou, std::uint32_t instance = vm::kAnyInstance)
        : runner(r), stops(r.module()), dbg(stops) {
        vm::FlowPlan plan;
        std::string why;
        EXPECT_TRUE(vm::planFlow(r.module(), pouNamed(r.module(), pou), plan, why)) << why;
        recorder = std::make_unique<vm::FlowRecorder>(std::move(plan), instance);
        stops.setFlow(recorder.get());
        r.vm().setDebugger(&dbg);
        dbg.attach();
    }
    // The value of `name` on `line` in the latest record (DINT, INT or BOOL).
    [[nodiscard]] std::int64_t value(std::uint32_t line, std::string_view name, bool written) {
        const vm::FlowAccess* a = accessOn(recorder->plan(), line, name, written);
        if (a == nullptr) {
            ADD_FAILURE() << "line " << line << " has no " << (written ? "write of " : "read of ") << name;
            return -1;
        }
        vm::FlowRecorder::View v;
        if (!recorder->latest(v)) {
            ADD_FAILURE() << "nothing published";
            return -1;
        }
        std::int64_t out = 0;
        if (a->size == 4) {
            std::int32_t x = 0;
            std::memcpy(&x, v.values.data() + a->slot, 4);
            out = x;
        } else if (a->size == 2) {
            std::int16_t x = 0;
            std::memcpy(&x, v.values.data() + a->slot, 2);
            out = x;
        } else {
            out = v.values[a->slot];
        }
        return out;
    }
    // How often the statements of `line` ran in the latest record (the most of any of them).
    [[nodiscard]] std::uint32_t ran(std::uint32_t line) {
        vm::FlowRecorder::View v;
        EXPECT_TRUE(recorder->latest(v));
        std::uint32_t n = 0;
        for (std::uint32_t i = 0; i < recorder->plan().statements.size(); ++i) {
            if (recorder->plan().statements[i].line == line) {
                n = std::max(n, v.counts[i]);
            }
        }
        return n;
    }

    Runner& runner;
    vm::StopMap stops;
    vm::Debugger dbg;
    std::unique_ptr<vm::FlowRecorder> recorder;
};

TEST(FlowPlan, NamesWhatEachStatementReadsAndWritesFromItsCode) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    vm::FlowPlan plan;
    std::string why;
    ASSERT_TRUE(vm::planFlow(r.module(), pouNamed(r.module(), "Main"), plan, why)) << why;
    // The call writes the FB's input, reads its output after the call and writes it to sum.
    EXPECT_NE(accessOn(plan, kLineCall, "i", false), nullptr);
    EXPECT_NE(accessOn(plan, kLineCall, "acc.x", true), nullptr);
    const vm::FlowAccess* total = accessOn(plan, kLineCall, "acc.total", false);
    ASSERT_NE(total, nullptr);
    EXPECT_TRUE(total->late);
    EXPECT_FALSE(accessOn(plan, kLineCall, "i", false)->late);
    EXPECT_NE(accessOn(plan, kLineCall, "sum", true), nullptr);
    EXPECT_EQ(accessOn(plan, kLineCall, "acc.x", false), nullptr); // the instance passed to the call is no read
    // An element at a computed index has no name: not its array's first element.
    EXPECT_NE(accessOn(plan, kLineIndexed, "i", false), nullptr);
    EXPECT_EQ(accessOn(plan, kLineIndexed, "arr[1]", true), nullptr);
    EXPECT_EQ(accessOn(plan, kLineIndexed, "arr[1]", false), nullptr);
    // A read after a call of what the statement writes is copied before it, not after.
    ASSERT_NE(accessOn(plan, kLineTwice, "sum", false), nullptr);
    EXPECT_FALSE(accessOn(plan, kLineTwice, "sum", false)->late);
    // An element at a constant index is named as such; a condition reads.
    EXPECT_NE(accessOn(plan, kLineArr, "arr[2]", true), nullptr);
    EXPECT_NE(accessOn(plan, kLineIf, "sum", false), nullptr);
    EXPECT_EQ(accessOn(plan, kLineIf, "sum", true), nullptr);
    EXPECT_NE(accessOn(plan, kLineBig, "big", true), nullptr);
    // An FB's statements name its own members.
    vm::FlowPlan fb;
    ASSERT_TRUE(vm::planFlow(r.module(), pouNamed(r.module(), "Accum"), fb, why)) << why;
    EXPECT_NE(accessOn(fb, kLineCalls, "calls", false), nullptr);
    EXPECT_NE(accessOn(fb, kLineCalls, "calls", true), nullptr);
    EXPECT_NE(accessOn(fb, kLineTotal, "x", false), nullptr);
    // A POU that is not there.
    EXPECT_FALSE(vm::planFlow(r.module(), static_cast<std::uint32_t>(r.module().pous.size()), fb, why));
    EXPECT_EQ(why, "no such POU");
}

TEST(FlowRecorder, PublishesEachRunWithTheLastExecutionOfEveryStatement) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Flow f(r, "Main");
    vm::FlowRecorder::View v;
    EXPECT_FALSE(f.recorder->latest(v)); // before the first run
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    ASSERT_TRUE(f.recorder->latest(v));
    EXPECT_EQ(v.run, 1u);
    EXPECT_EQ(f.ran(kLineCall), 3u);
    EXPECT_EQ(f.ran(kLineOther), 1u);
    EXPECT_EQ(f.ran(kLineBig), 0u); // the IF's branch did not run
    EXPECT_EQ(f.value(kLineCall, "i", false), 3);
    EXPECT_EQ(f.value(kLineCall, "acc.x", true), 3);
    EXPECT_EQ(f.value(kLineCall, "acc.total", false), 6); // read after the call: its new output
    EXPECT_EQ(f.value(kLineCall, "sum", true), 6);
    EXPECT_EQ(f.value(kLineArr, "arr[2]", true), 7);
    EXPECT_EQ(f.value(kLineIf, "sum", false), 6);
    EXPECT_EQ(f.value(kLineTwice, "sum", false), 6); // before the statement
    EXPECT_EQ(f.value(kLineTwice, "sum", true), 14); // 6 + Twice(4)
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(f.value(kLineCall, "sum", true), 12);
    ASSERT_TRUE(f.recorder->latest(v));
    EXPECT_EQ(v.run, 2u);
    EXPECT_EQ(f.recorder->owner(), &f.dbg);
}

TEST(FlowRecorder, ReadsBeforeTheStatementAndWritesAfterItOnTheInstanceChosen) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Flow acc(r, "Accum", offsetOf(r.module(), "Main.acc"));
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(acc.ran(kLineCalls), 3u); // three calls on acc; other's call is not recorded
    EXPECT_EQ(acc.value(kLineCalls, "calls", false), 2);
    EXPECT_EQ(acc.value(kLineCalls, "calls", true), 3);
    EXPECT_EQ(acc.value(kLineTotal, "x", false), 3);
    EXPECT_EQ(acc.value(kLineTotal, "total", true), 6);

    Runner r2(kSource);
    ASSERT_TRUE(r2.ok) << r2.errors();
    Flow other(r2, "Accum", offsetOf(r2.module(), "Main.other"));
    ASSERT_EQ(r2.cycle(), vm::Trap::None);
    EXPECT_EQ(other.ran(kLineCalls), 1u);
    EXPECT_EQ(other.value(kLineTotal, "x", false), 10);
    EXPECT_EQ(other.value(kLineTotal, "total", true), 10);
}

// A statement's writes are copied when the next statement starts, before a breakpoint there
// halts: a value set while halted is not shown as written by the statement before.
TEST(FlowRecorder, WritesAreTakenBeforeAHaltAtTheNextStatement) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Flow f(r, "Main");
    std::uint32_t file = 0;
    for (; file < r.module().files.size() && r.module().files[file].find("main.st") == std::string::npos; ++file) {
    }
    const vm::ResolvedLine at = vm::resolveLine(r.module(), file, kLineArr);
    ASSERT_TRUE(at.verified) << at.reason;
    ASSERT_TRUE(f.stops.setBreakpoint(at.pcs.front(), true));
    auto cycle = std::async(std::launch::async, [&r] { return r.cycle(); });
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::int64_t deadline = (static_cast<std::int64_t>(ts.tv_sec) + 10) * 1'000'000'000 + ts.tv_nsec;
    ASSERT_TRUE(f.dbg.waitHalted(0, deadline));
    r.set<std::int32_t>("Main.other.x", 99); // while halted before line 16
    ASSERT_TRUE(f.dbg.resume(vm::StepMode::None));
    ASSERT_EQ(cycle.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(cycle.get(), vm::Trap::None);
    EXPECT_EQ(f.value(kLineOther, "other.x", true), 10);
}

TEST(FlowRecorder, OnlyWhileAttachedAndOnlyTheFirstThreadThatRunsThePou) {
    Runner r(kSource);
    ASSERT_TRUE(r.ok) << r.errors();
    Flow f(r, "Main");
    f.dbg.detach();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    vm::FlowRecorder::View v;
    EXPECT_FALSE(f.recorder->latest(v)); // a detached debugger runs the plain loop
    EXPECT_EQ(f.recorder->owner(), nullptr);
    f.dbg.attach();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    ASSERT_TRUE(f.recorder->latest(v));
    // Another thread's debugger on the same map does not write into the record.
    Runner r2(kSource);
    ASSERT_TRUE(r2.ok) << r2.errors();
    vm::Debugger second(f.stops);
    r2.vm().setDebugger(&second);
    second.attach();
    r2.set<std::int32_t>("Main.acc.total", 1000);
    ASSERT_EQ(r2.cycle(), vm::Trap::None);
    EXPECT_EQ(f.recorder->owner(), &f.dbg);
    EXPECT_EQ(f.value(kLineCall, "sum", true), 12); // r's second cycle, not r2's
    // Off: the map has no recorder and the runs leave it be.
    f.stops.setFlow(nullptr);
    EXPECT_FALSE(f.dbg.armed());
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    ASSERT_TRUE(f.recorder->latest(v));
    EXPECT_EQ(v.run, 1u);
}

} // namespace
} // namespace takt::compiler
