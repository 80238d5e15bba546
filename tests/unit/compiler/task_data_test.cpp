// What each TASK reaches: TaskEntry::io (the located variables a task copies at its own cycle
// start and end) and W0016 (a variable two tasks share that is not shared atomically).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen_test_support.h"
#include "sema_test_support.h"
#include "takt/compiler/sema/task_data.h"

namespace takt::compiler::test {
namespace {

// The addresses of a task's io entries, in order.
std::vector<std::string> taskIo(const Compiled& c, std::string_view task) {
    std::vector<std::string> out;
    for (const bytecode::TaskEntry& t : c.module.tasks) {
        if (sameName(t.name, task)) {
            for (std::uint32_t i : t.io) {
                out.push_back(c.module.io.at(i).address);
            }
        }
    }
    return out;
}

using Addresses = std::vector<std::string>;

TEST(TaskIo, DisjointAndSharedLocatedVariables) {
    Compiled c(R"(
VAR_GLOBAL
  fastIn AT %IX0.0 : BOOL;
  fastOut AT %QX0.0 : BOOL;
  slowIn AT %IW2 : INT;
  slowOut AT %QW4 : INT;
  both AT %MW10 : INT;
  nobody AT %IX0.7 : BOOL;
END_VAR
PROGRAM Fast
  VAR_EXTERNAL fastIn : BOOL; fastOut : BOOL; both : INT; END_VAR
  fastOut := fastIn;
  both := both + 1;
END_PROGRAM
PROGRAM Slow
  VAR local AT %IX1.1 : BOOL; END_VAR
  slowOut := slowIn + both;
  IF local THEN slowOut := 0; END_IF
  %QX3.0 := TRUE;
END_PROGRAM
PROGRAM Idle
  nobody := FALSE;
END_PROGRAM
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK TFast(INTERVAL := T#1ms, PRIORITY := 0);
    TASK TSlow(INTERVAL := T#100ms, PRIORITY := 5);
    TASK TEmpty(INTERVAL := T#1s, PRIORITY := 9);
    PROGRAM F WITH TFast : Fast;
    PROGRAM S WITH TSlow : Slow;
    PROGRAM I : Idle;
  END_RESOURCE
END_CONFIGURATION
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    EXPECT_TRUE(c.verified.ok()) << c.verified.message;
    EXPECT_EQ(taskIo(c, "TFast"), (Addresses{"%IX0.0", "%QX0.0", "%MW10"}));
    EXPECT_EQ(taskIo(c, "TSlow"), (Addresses{"%IW2", "%QW4", "%MW10", "%IX1.1", "%QX3.0"}));
    // A program bound to no task contributes to no task; a task without programs copies nothing.
    EXPECT_EQ(taskIo(c, "TEmpty"), Addresses{});
    const std::string text = bytecode::disassemble(c.module);
    EXPECT_NE(text.find("; task 0 TFast interval 1000000 ns priority 0 io %IX0.0, %QX0.0, %MW10\n"), std::string::npos)
        << text;
}

TEST(TaskIo, LocatedVariableReachedOnlyThroughAnFbCall) {
    Compiled c(R"(
VAR_GLOBAL
  limit AT %IX2.0 : BOOL;
  other AT %IX2.1 : BOOL;
END_VAR
FUNCTION_BLOCK Guard
  VAR_OUTPUT tripped : BOOL; END_VAR
  VAR_EXTERNAL limit : BOOL; END_VAR
  tripped := limit;
END_FUNCTION_BLOCK
FUNCTION ReadOther : BOOL
  ReadOther := other;
END_FUNCTION
PROGRAM Main
  VAR g : Guard; t : BOOL; END_VAR
  g();
  t := g.tripped;
END_PROGRAM
PROGRAM Aux
  VAR b : BOOL; END_VAR
  b := ReadOther();
END_PROGRAM
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK A(INTERVAL := T#10ms, PRIORITY := 1);
    TASK B(INTERVAL := T#20ms, PRIORITY := 2);
    PROGRAM P1 WITH A : Main;
    PROGRAM P2 WITH B : Aux;
  END_RESOURCE
END_CONFIGURATION
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    EXPECT_EQ(taskIo(c, "A"), Addresses{"%IX2.0"});
    EXPECT_EQ(taskIo(c, "B"), Addresses{"%IX2.1"});
}

TEST(TaskIo, MethodCallThroughAnInterfaceReachesEveryImplementation) {
    Compiled c(R"(
VAR_GLOBAL
  outA AT %QX5.0 : BOOL;
  outB AT %QX5.1 : BOOL;
  unrelated AT %QX5.2 : BOOL;
END_VAR
INTERFACE IActuator
  METHOD Open : BOOL END_METHOD
END_INTERFACE
FUNCTION_BLOCK ValveA IMPLEMENTS IActuator
  METHOD Open : BOOL
    outA := TRUE;
    Open := TRUE;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK ValveB IMPLEMENTS IActuator
  METHOD Open : BOOL
    outB := TRUE;
    Open := TRUE;
  END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Other
  METHOD Open : BOOL
    unrelated := TRUE;
    Open := TRUE;
  END_METHOD
END_FUNCTION_BLOCK
PROGRAM Main
  VAR a : ValveA; act : IActuator; ok : BOOL; END_VAR
  act := a;
  ok := act.Open();
END_PROGRAM
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK T(INTERVAL := T#10ms, PRIORITY := 1);
    PROGRAM P WITH T : Main;
  END_RESOURCE
END_CONFIGURATION
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    // Dispatch may reach either implementation; Other.Open, never called, is not reached.
    EXPECT_EQ(taskIo(c, "T"), (Addresses{"%QX5.0", "%QX5.1"}));
}

// ---- alignment: what makes an elementary value atomic across tasks -------------------------------

TEST(SharedValueLayout, EveryElementaryValueLiesAtAMultipleOfItsSize) {
    Compiled c(R"(
TYPE Mixed : STRUCT flag : BOOL; big : LINT; small : INT; real8 : LREAL; b : BYTE; t : TIME; d : DATE; END_STRUCT; END_TYPE
FUNCTION_BLOCK Holder
  VAR_INPUT run : BOOL; END_VAR
  VAR count : LINT; m : Mixed; w : WORD; END_VAR
  count := count + 1;
END_FUNCTION_BLOCK
VAR_GLOBAL
  g1 : BOOL;
  g2 : LWORD;
  g3 : SINT;
  g4 : LREAL;
  g5 : Mixed;
  g6 : ARRAY [0..2] OF Mixed;
  g7 : Holder;
END_VAR
PROGRAM Main
  VAR a : BOOL; b : LTIME; h : Holder; e : DINT; END_VAR
  g7(run := a);
  h(run := g1);
END_PROGRAM
)");
    ASSERT_TRUE(c.ok) << c.rendered();
    std::size_t checked = 0;
    for (const bytecode::VarEntry& v : c.module.variables) {
        const bytecode::TypeDesc& t = c.module.types.at(v.type);
        if (t.kind <= bytecode::ValueKind::WChar && t.size <= 8) {
            EXPECT_EQ(v.offset % t.size, 0u) << v.path << " (" << t.name << ") at " << v.offset;
            ++checked;
        }
    }
    // Inside STRUCTs and FB instances too, whose own alignment is their largest member's.
    for (const bytecode::TypeDesc& t : c.module.types) {
        if (t.kind != bytecode::ValueKind::Struct && t.kind != bytecode::ValueKind::FunctionBlock) {
            continue;
        }
        for (const bytecode::FieldDesc& f : t.fields) {
            const bytecode::TypeDesc& ft = c.module.types.at(f.type);
            if (ft.kind <= bytecode::ValueKind::WChar && ft.size <= 8 && ft.size > 0) {
                EXPECT_EQ(f.offset % ft.size, 0u) << t.name << "." << f.name;
                EXPECT_GE(t.align, ft.size) << t.name << "." << f.name;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 20u);
}

// ---- W0016 ------------------------------------------------------------------------------------

const char* const kSharedPrelude = R"(
TYPE TRecipe : STRUCT speed : INT; temp : REAL; END_STRUCT; END_TYPE
VAR_GLOBAL
  recipe : TRecipe;
  label : STRING[20];
  counter : LINT;
  ticks : ARRAY [0..3] OF INT; next : TRecipe;
END_VAR
PROGRAM Writer
  recipe := next;
  label := 'running';
  counter := counter + 1;
END_PROGRAM
PROGRAM Reader
  VAR s : INT; l : STRING[20]; n : LINT; t : INT; END_VAR
  s := recipe.speed;
  l := label;
  n := counter;
  t := ticks[1];
END_PROGRAM
)";

TEST(SharedVariables, StructAndStringWrittenInOneTaskAndReadInAnotherWarn) {
    Analysis a(std::string(kSharedPrelude) + R"(
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK Fast(INTERVAL := T#2ms, PRIORITY := 0);
    TASK Slow(INTERVAL := T#50ms, PRIORITY := 3);
    PROGRAM W WITH Fast : Writer;
    PROGRAM R WITH Slow : Reader;
  END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    // At the writes (lines 10 and 11): the STRUCT and the STRING; the LINT is atomic, the ARRAY
    // is only read.
    EXPECT_EQ(a.at("W0016"), (std::vector<std::string>{"main.st:10:3", "main.st:11:3"}));
    const Diagnostic* d = a.first("W0016");
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->message.find("'recipe' (TRecipe) is written in task 'Fast' and read in task 'Slow'"),
              std::string::npos)
        << d->message;
    ASSERT_EQ(d->related.size(), 1u);
    EXPECT_EQ(a.where(d->related[0].span), "main.st:16:8");
    EXPECT_NE(d->related[0].message.find("task 'Slow' reads 'recipe'"), std::string::npos);
}

TEST(SharedVariables, SingleElementsAndMembersOnBothSidesDoNotWarn) {
    // Each write and each read moves one BOOL or one INT, which no reader sees half-written.
    Analysis a(R"(
TYPE Pair : STRUCT speed : INT; ramp : REAL; END_STRUCT; END_TYPE
VAR_GLOBAL alarms : ARRAY [1..5] OF BOOL; p : Pair; whole : Pair; END_VAR
PROGRAM Writer
  alarms[2] := TRUE;
  p.speed := 3;
  whole.speed := 4;
END_PROGRAM
PROGRAM Reader
  VAR b : BOOL; s : INT; w : Pair; END_VAR
  b := alarms[2];
  s := p.speed;
  w := whole;
END_PROGRAM
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK A(INTERVAL := T#10ms, PRIORITY := 0);
    TASK B(INTERVAL := T#20ms, PRIORITY := 1);
    PROGRAM W WITH A : Writer;
    PROGRAM R WITH B : Reader;
  END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    // Only `whole`, read as a whole while a member of it is written: at the member's write.
    EXPECT_EQ(a.at("W0016"), std::vector<std::string>{"main.st:7:3"}) << a.rendered();
}

TEST(SharedVariables, OneTaskOrNoWriterDoesNotWarn) {
    // Both programs in one task: no other thread can see a half-written value.
    Analysis one(std::string(kSharedPrelude) + R"(
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK Only(INTERVAL := T#10ms, PRIORITY := 0);
    PROGRAM W WITH Only : Writer;
    PROGRAM R WITH Only : Reader;
  END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_EQ(one.errors(), 0u) << one.rendered();
    EXPECT_TRUE(one.at("W0016").empty()) << one.rendered();
    // Two readers of a STRUCT share it safely.
    Analysis readers(std::string(kSharedPrelude) + R"(
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK A(INTERVAL := T#10ms, PRIORITY := 0);
    TASK B(INTERVAL := T#20ms, PRIORITY := 1);
    PROGRAM R1 WITH A : Reader;
    PROGRAM R2 WITH B : Reader;
  END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_TRUE(readers.at("W0016").empty()) << readers.rendered();
}

TEST(SharedVariables, ListingNamesEachPairWithDirections) {
    Analysis a(std::string(kSharedPrelude) + R"(
CONFIGURATION Cfg
  RESOURCE Res ON PLC
    TASK Fast(INTERVAL := T#2ms, PRIORITY := 0);
    TASK Slow(INTERVAL := T#50ms, PRIORITY := 3);
    PROGRAM W WITH Fast : Writer;
    PROGRAM R WITH Slow : Reader;
  END_RESOURCE
END_CONFIGURATION
)");
    const std::vector<SharedTasks> pairs = sharedVariables(a.model().taskData);
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(pairs[0].first->task->name, "Fast");
    EXPECT_EQ(pairs[0].second->task->name, "Slow");
    std::vector<std::string> names;
    for (const SharedVariable& v : pairs[0].variables) {
        names.push_back(v.var.variable->name + (v.first->written ? " w" : " r") + (v.second->written ? "/w" : "/r"));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"recipe w/r", "label w/r", "counter w/r"}));
}

} // namespace
} // namespace takt::compiler::test
