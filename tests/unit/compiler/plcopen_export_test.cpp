// `takt export plcopen` (plcopen_export.h): a project exported to PLCopen XML and read back by the
// PLCopen reader compiles to the same program. "The same" is every section of program.stbc but the
// two that name source places, FILES and DEBUG (the XML's lines are not the ST's): the code, the
// image with its initial values, the types, symbols, POUs, tasks, program instances and I/O.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/temp_dir.h"
#include "takt/bytecode/container.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/plcopen_export.h"
#include "takt/compiler/project.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// program.stbc without the source file list and the line table.
std::vector<std::uint8_t> withoutSourcePlaces(const bytecode::Module& module) {
    bytecode::Module copy = module;
    copy.files.clear();
    copy.debug.clear();
    return bytecode::serialize(copy);
}

std::string rendered(const std::vector<Diagnostic>& diags, const Project& p) {
    return renderHuman(diags, *p.sources);
}

PlcopenExportOptions options() {
    PlcopenExportOptions o;
    o.projectName = "test";
    o.creationDateTime = "2026-01-01T00:00:00Z";
    return o;
}

PlcopenExport exportOf(const Project& p) {
    return exportPlcopen(p, options());
}

// Exports the project in `dir`, reads the XML back as the only source of a fresh project and
// expects both to compile to the same program; returns the XML.
std::string expectRoundTrip(const fs::path& dir, const PlcopenExportOptions& o = options()) {
    Project original = checkProject({dir, {}, false, {}, {}});
    EXPECT_TRUE(original.ok()) << rendered(original.diagnostics, original);
    const PlcopenExport exported = exportPlcopen(original, o);
    EXPECT_TRUE(exported.problems.empty()) << rendered(exported.problems, original);
    EXPECT_FALSE(exported.xml.empty());
    const CompiledProgram before = compileProgram(original);
    EXPECT_TRUE(before.ok()) << before.failure;

    TempDir imported;
    imported.write("src/project.xml", exported.xml);
    Project back = checkProject({imported.path(), {}, false, {}, {}});
    EXPECT_TRUE(back.ok()) << rendered(back.diagnostics, back) << exported.xml;
    const CompiledProgram after = compileProgram(back);
    EXPECT_TRUE(after.ok()) << after.failure;
    if (before.ok() && after.ok()) {
        EXPECT_TRUE(withoutSourcePlaces(*before.module) == withoutSourcePlaces(*after.module))
            << "the program read back from the XML differs from the ST's\n"
            << exported.xml;
        EXPECT_NE(before.hash, after.hash); // the line tables differ: the comparison is not vacuous
    }
    return exported.xml;
}

std::string expectRoundTripOf(const std::string& st) {
    TempDir dir;
    dir.write("src/main.st", st);
    return expectRoundTrip(dir.path());
}

// The `x` or `y` of step `step`'s <position> in an exported document.
int positionOf(const std::string& xml, const std::string& step, const char* axis) {
    const std::size_t at = xml.find(std::string(axis) + "=\"", xml.find("name=\"" + step + "\""));
    return std::stoi(xml.substr(at + 3));
}

// How often `text` occurs in `xml`.
std::size_t occurrences(const std::string& xml, const std::string& text) {
    std::size_t n = 0;
    for (std::size_t at = xml.find(text); at != std::string::npos; at = xml.find(text, at + 1)) {
        ++n;
    }
    return n;
}

TEST(PlcopenExport, TheDemoProjectRoundTrips) {
    const std::string xml = expectRoundTrip(fs::path(TAKT_SOURCE_DIR) / "examples/demo");
    // Structured declarations, not text: a located input and a GVL in CODESYS's addData.
    EXPECT_NE(xml.find("<variable name=\"diStart\" address=\"%IX0.0\">"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<data name=\"http://www.3s-software.com/plcopenxml/globalvars\""), std::string::npos);
    EXPECT_NE(xml.find("<task name=\"FastTask\" interval=\"T#10ms\" priority=\"1\">"), std::string::npos);
    EXPECT_NE(xml.find("<pouInstance name=\"Line\" typeName=\"FillingLine\""), std::string::npos);
}

// A project without a CONFIGURATION gets one for the editors (a task at runtime.toml's base cycle
// running every PROGRAM), which takt's reader reads for runtime.toml only: the program still runs
// every base cycle, as an implicit instance named like the PROGRAM.
TEST(PlcopenExport, TheOpcuaExampleWithoutAConfigurationRoundTrips) {
    PlcopenExportOptions o = options();
    o.resourceName = "tank";
    o.cycleIntervalMs = 20;
    const std::string xml = expectRoundTrip(fs::path(TAKT_SOURCE_DIR) / "examples/opcua", o);
    EXPECT_NE(xml.find("<resource name=\"tank\">"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<task name=\"MainTask\" interval=\"T#20ms\" priority=\"1\">"), std::string::npos);
    EXPECT_NE(xml.find("<pouInstance name=\"Main\" typeName=\"Main\""), std::string::npos);
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty());
    ASSERT_EQ(t.resources.size(), 1u);
    EXPECT_EQ(t.resources[0].name, "tank");
    EXPECT_TRUE(t.resources[0].implicit);
    ASSERT_EQ(t.resources[0].tasks.size(), 1u);
    EXPECT_EQ(t.resources[0].tasks[0].intervalMs, 20u);
    EXPECT_EQ(t.text.find("CONFIGURATION"), std::string::npos) << t.text;
}

// An SFC chart is written as an <SFC> network (steps, transitions with their conditions and
// priorities, action blocks, divergences, convergences, a jump back) and reads back as the same
// chart: the same program, in a PROGRAM and in a FUNCTION_BLOCK.
TEST(PlcopenExport, AnSfcChartRoundTripsAsAnSfcNetwork) {
    const std::string xml = expectRoundTripOf(R"(
FUNCTION_BLOCK Blink
VAR_INPUT run : BOOL; END_VAR
VAR_OUTPUT lamp : BOOL; END_VAR
INITIAL_STEP Dark: END_STEP
TRANSITION FROM Dark TO Lit := run AND Dark.T >= T#20ms; END_TRANSITION
STEP Lit: lamp(N); END_STEP
TRANSITION FROM Lit TO Dark := Lit.T >= T#20ms; END_TRANSITION
END_FUNCTION_BLOCK

PROGRAM Seq
VAR start, full, hot, stop, valve, mixer : BOOL; count : INT; b : Blink; END_VAR
INITIAL_STEP Idle: END_STEP
TRANSITION FROM Idle TO (Fill, Heat) := start; END_TRANSITION
STEP Fill: valve(N); END_STEP
STEP Heat: Tally(P); Warn(l, T#20ms); END_STEP
TRANSITION FROM (Fill, Heat) TO Mix := full AND hot; END_TRANSITION
STEP Mix: mixer(S); END_STEP
TRANSITION (PRIORITY := 2) FROM Mix TO Drain := stop; END_TRANSITION
TRANSITION (PRIORITY := 1) FROM Mix TO Rinse := NOT full; END_TRANSITION
STEP Rinse: END_STEP
TRANSITION FROM Rinse TO Drain := Rinse.T >= T#10ms; END_TRANSITION
STEP Drain: mixer(R); END_STEP
TRANSITION FROM Drain TO Idle := NOT hot; END_TRANSITION
ACTION Tally: count := count + 1; b(run := TRUE); END_ACTION
ACTION Warn: count := count + 10; END_ACTION
END_PROGRAM
)");
    for (const char* element :
         {"<SFC>", "<step localId=\"1\" height=\"30\" width=\"60\" name=\"Idle\" initialStep=\"true\">",
          "<simultaneousDivergence", "<simultaneousConvergence", "<selectionDivergence", "<selectionConvergence",
          "<jumpStep", "targetName=\"Idle\"", "priority=\"1\"", "qualifier=\"L\" duration=\"T#20ms\"",
          "<reference name=\"Tally\"", "<action name=\"Tally\">"}) {
        EXPECT_NE(xml.find(element), std::string::npos) << element << "\n" << xml;
    }
    EXPECT_EQ(xml.find("SFC_STEP"), std::string::npos) << "the chart's own variables are not declared\n" << xml;
}

// A chart written steps first, as takt's own examples are: drawn from the initial step down (a
// wire into each step entered from above, a jump only for the loop back), and a PRIORITY written
// in another base comes out as the number.
TEST(PlcopenExport, AChartWrittenStepsFirstIsDrawnAsItsSequence) {
    const std::string xml = expectRoundTripOf(R"(
PROGRAM Seq
VAR go, stop : BOOL; END_VAR
INITIAL_STEP Idle: END_STEP
STEP Run: END_STEP
STEP Halt: END_STEP
TRANSITION (PRIORITY := 16#2) FROM Idle TO Run := go; END_TRANSITION
TRANSITION FROM Run TO Halt := stop; END_TRANSITION
TRANSITION FROM Halt TO Idle := NOT go; END_TRANSITION
END_PROGRAM
)");
    EXPECT_NE(xml.find("priority=\"2\""), std::string::npos) << xml;
    EXPECT_EQ(occurrences(xml, "<jumpStep"), 1u) << "only the loop back to Idle is a jump\n" << xml;
    EXPECT_NE(xml.find("targetName=\"Idle\""), std::string::npos) << xml;
    // Run is drawn below Idle, and Halt below Run.
    const auto y = [&](const std::string& step) { return positionOf(xml, step, "y"); };
    EXPECT_LT(y("Idle"), y("Run")) << xml;
    EXPECT_LT(y("Run"), y("Halt")) << xml;
}

// Each branch of a divergence is drawn in a column of its own, so that no two branches overlap in
// the editor; the step where they join is drawn in the leftmost branch's column.
TEST(PlcopenExport, EachBranchIsDrawnInAColumnOfItsOwn) {
    const std::string xml = expectRoundTripOf(R"(
PROGRAM Branches
VAR a, b, go, done : BOOL; END_VAR
INITIAL_STEP S0: END_STEP
STEP Fill: END_STEP
STEP Alt: END_STEP
STEP Mixed: END_STEP
STEP L1: END_STEP
STEP R1: END_STEP
TRANSITION FROM S0 TO Fill := a; END_TRANSITION
TRANSITION FROM S0 TO Alt := b; END_TRANSITION
TRANSITION FROM Fill TO Mixed := go; END_TRANSITION
TRANSITION FROM Alt TO Mixed := go; END_TRANSITION
TRANSITION FROM Mixed TO (L1, R1) := go; END_TRANSITION
TRANSITION FROM (L1, R1) TO S0 := done; END_TRANSITION
END_PROGRAM
)");
    const auto x = [&](const std::string& step) { return positionOf(xml, step, "x"); };
    EXPECT_EQ(x("S0"), x("Fill")) << xml;
    EXPECT_NE(x("Fill"), x("Alt")) << xml;
    EXPECT_EQ(x("Mixed"), x("Fill")) << "where Fill's and Alt's branches join, in the leftmost column\n" << xml;
    EXPECT_EQ(x("L1"), x("Mixed")) << xml;
    EXPECT_NE(x("R1"), x("L1")) << xml;
    const auto y = [&](const std::string& step) { return positionOf(xml, step, "y"); };
    EXPECT_EQ(y("L1"), y("R1")) << "parallel branches side by side\n" << xml;
    EXPECT_EQ(y("Fill"), y("Alt")) << xml;
    EXPECT_LT(y("Fill"), y("Mixed")) << xml;
    EXPECT_NE(x("R1"), x("Alt")) << xml;
    // Exclusive steps each entering one simultaneous divergence: drawn as CODESYS draws them, a
    // selection convergence of their transitions before one simultaneous divergence.
    const std::string exclusive = expectRoundTripOf(R"(
PROGRAM Exclusive
VAR a, b, go, done : BOOL; END_VAR
INITIAL_STEP Idle: END_STEP
STEP FillA: END_STEP
STEP FillB: END_STEP
STEP Heat: END_STEP
STEP Mix: END_STEP
TRANSITION FROM Idle TO FillA := a; END_TRANSITION
TRANSITION FROM Idle TO FillB := b; END_TRANSITION
TRANSITION FROM FillA TO (Heat, Mix) := go; END_TRANSITION
TRANSITION FROM FillB TO (Heat, Mix) := go; END_TRANSITION
TRANSITION FROM (Heat, Mix) TO Idle := done; END_TRANSITION
END_PROGRAM
)");
    EXPECT_EQ(occurrences(exclusive, "<simultaneousDivergence "), 1u) << exclusive;
    EXPECT_EQ(occurrences(exclusive, "<selectionConvergence "), 1u) << exclusive;
    const std::size_t join = exclusive.find("<selectionConvergence ");
    const std::size_t fork = exclusive.find("<simultaneousDivergence ");
    ASSERT_NE(join, std::string::npos);
    ASSERT_NE(fork, std::string::npos);
    const std::string joinId = exclusive.substr(join, exclusive.find('>', join) - join);
    const std::size_t id = joinId.find("localId=\"") + 9;
    EXPECT_NE(exclusive.find("refLocalId=\"" + joinId.substr(id, joinId.find('"', id) - id) + "\"", fork),
              std::string::npos)
        << "the divergence follows the convergence\n"
        << exclusive;
    // The shared join is drawn below the lowest of its transitions, whichever is written last.
    const std::string longer = expectRoundTripOf(R"(
PROGRAM Longer
VAR a, b, go, done : BOOL; END_VAR
INITIAL_STEP Idle: END_STEP
STEP FillA: END_STEP
STEP FillB: END_STEP
STEP FillB2: END_STEP
STEP Heat: END_STEP
STEP Mix: END_STEP
TRANSITION FROM Idle TO FillA := a; END_TRANSITION
TRANSITION FROM Idle TO FillB := b; END_TRANSITION
TRANSITION FROM FillB TO FillB2 := go; END_TRANSITION
TRANSITION FROM FillB2 TO (Heat, Mix) := go; END_TRANSITION
TRANSITION FROM FillA TO (Heat, Mix) := go; END_TRANSITION
TRANSITION FROM (Heat, Mix) TO Idle := done; END_TRANSITION
END_PROGRAM
)");
    const auto yAt = [&](const std::string& tag) {
        const std::size_t at = longer.find("y=\"", longer.find(tag));
        return std::stoi(longer.substr(at + 3));
    };
    EXPECT_GT(yAt("<selectionConvergence "), positionOf(longer, "FillB2", "y")) << longer;
    EXPECT_LT(yAt("<selectionConvergence "), positionOf(longer, "Heat", "y")) << longer;
}

// A PROPERTY is written as CODESYS writes it, vendor data of its POU with its accessors in the
// order written, each with its own variables and body, and reads back as the same program.
TEST(PlcopenExport, APropertyRoundTripsAsCodesysWritesIt) {
    const std::string xml = expectRoundTripOf(R"(
FUNCTION_BLOCK Tank
VAR lvl : INT; writes : INT; END_VAR
PROPERTY Level : INT
SET
VAR clipped : INT; END_VAR
    (* the setter clips *)
    clipped := LIMIT(0, Level, 100);
    lvl := clipped;
    writes := writes + 1;
END_SET
GET
    Level := lvl;
END_GET
END_PROPERTY
METHOD PRIVATE Reset
    lvl := 0;
END_METHOD
PROPERTY INTERNAL Count : INT
GET
    Count := writes;
END_GET
END_PROPERTY
IF writes > 1000 THEN Reset(); END_IF;
END_FUNCTION_BLOCK

PROGRAM Main
VAR t : Tank; v : INT; n : INT; END_VAR
t.Level := v * 3;
n := t.Count + t.Level;
END_PROGRAM
)");
    const std::size_t set = xml.find("<SetAccessor>");
    const std::size_t get = xml.find("<GetAccessor>");
    EXPECT_NE(xml.find("<data name=\"http://www.3s-software.com/plcopenxml/property\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("<Property name=\"Level\">"), std::string::npos) << xml;
    ASSERT_NE(set, std::string::npos) << xml;
    ASSERT_NE(get, std::string::npos) << xml;
    EXPECT_LT(set, get) << "in the order written\n" << xml;
    EXPECT_NE(xml.find("<variable name=\"clipped\">", set), std::string::npos) << xml;
    EXPECT_NE(xml.find("(* the setter clips *)"), std::string::npos) << xml;
    EXPECT_EQ(xml.find("END_SET"), std::string::npos) << "the body only\n" << xml;
    EXPECT_LT(xml.find("<Property name=\"Level\">"), xml.find("<Method name=\"Reset\">")) << xml;
    // CODESYS's access modifiers, read back as written.
    EXPECT_NE(xml.find("<AccessModifiers Private=\"true\" />"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<AccessModifiers Internal=\"true\" />"), std::string::npos) << xml;
    const PlcopenTranslation back = translatePlcopen(xml);
    EXPECT_NE(back.text.find("METHOD PRIVATE Reset"), std::string::npos) << back.text;
    EXPECT_NE(back.text.find("PROPERTY INTERNAL Count : INT"), std::string::npos) << back.text;
    EXPECT_LT(xml.find("<Method name=\"Reset\">"), xml.find("<Property name=\"Count\">")) << "in source order\n" << xml;
}

// A GET or SET may narrow its property's access (CODESYS): written in the accessor's interface,
// never in its body.
TEST(PlcopenExport, AnAccessorsOwnAccessIsWrittenInItsInterface) {
    const std::string xml = expectRoundTripOf(R"(
FUNCTION_BLOCK Valve
VAR pos : INT; END_VAR
PROPERTY Position : INT
GET
    Position := pos;
END_GET
SET PRIVATE;
    pos := LIMIT(0, Position, 100);
END_SET
END_PROPERTY
Position := pos + 1;
END_FUNCTION_BLOCK

PROGRAM Main
VAR v : Valve; n : INT; END_VAR
v();
n := v.Position;
END_PROGRAM
)");
    const std::size_t set = xml.find("<SetAccessor>");
    ASSERT_NE(set, std::string::npos) << xml;
    const std::size_t body = xml.find("<body>", set);
    const std::size_t modifiers = xml.find("<AccessModifiers Private=\"true\" />", set);
    EXPECT_LT(modifiers, body) << "in the SET's interface\n" << xml;
    EXPECT_EQ(xml.find("PRIVATE", body), std::string::npos) << "not in its body\n" << xml;
    EXPECT_NE(translatePlcopen(xml).text.find("SET PRIVATE"), std::string::npos);
}

TEST(PlcopenExport, TheBenchmarkProgramsRoundTrip) {
    for (const char* name : {"array_struct", "fb_calls", "int_arith", "real_math", "timers_edges"}) {
        SCOPED_TRACE(name);
        TempDir dir;
        fs::create_directories(dir.path() / "src");
        fs::copy_file(fs::path(TAKT_SOURCE_DIR) / "bench/programs" / (std::string(name) + ".st"),
                      dir.path() / "src" / (std::string(name) + ".st"));
        (void)expectRoundTrip(dir.path());
    }
}

// Every declaration form the reader reads back: the types, initial values, sections and their
// qualifiers, actions, a function, a configuration with a resource's globals and a program on
// no task.
TEST(PlcopenExport, EveryExportedFormRoundTrips) {
    const std::string xml = expectRoundTripOf(R"(
TYPE
  Mode : (Off, Manual := 5, Auto);
  Level : DINT (Low, High);
  Percent : INT (0..100) := 50;
  Count : UINT (1..10);
  Name : STRING[12] := 'tank';
  Pair : ARRAY[0..1] OF REAL;
  Recipe : STRUCT
    fill : TIME := T#2s500ms;
    steps : ARRAY[1..3] OF INT := [1, 2(7)];
    label : WSTRING[8];
  END_STRUCT;
  Ptr : POINTER TO INT;
END_TYPE

FUNCTION Clamp : INT
VAR_INPUT
  x, lo : INT;
  hi : INT := LIMIT_HI;
END_VAR
Clamp := LIMIT(lo, x, hi);
END_FUNCTION

FUNCTION_BLOCK Pump
VAR_INPUT
  run : BOOL;
END_VAR
VAR_OUTPUT
  active : BOOL;
END_VAR
VAR_IN_OUT
  starts : UDINT;
END_VAR
VAR
  t : TON := (PT := T#1s);
  r : Recipe := (fill := T#3s, steps := [4, 5, 6]);
  modes : ARRAY[1..2, 0..1] OF Mode := [Mode#Auto, 3(Mode#Off)];
END_VAR
VAR_TEMP
  tmp : LREAL;
END_VAR
t(IN := run);
active := t.Q; (* the comment stays in the body *)
IF active THEN
  starts := starts + 1;
  Stop();
END_IF;
ACTION Stop:
  active := FALSE;
END_ACTION
METHOD Twice : UDINT
VAR_INPUT
  n : UDINT;
END_VAR
VAR
  k : UDINT := 2;
END_VAR
Twice := n * k;
END_METHOD
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  p : Pump;
  level : INT;
  pct : Percent;
  mode : Mode := Mode#Manual;
  c : Count := 3;
  lvl : Level := Level#High;
  n : Name;
  pair : Pair := [1.5, -2.0];
  s : STRING := 'a]]>b';
END_VAR
VAR PERSISTENT
  kept : INT;
END_VAR
VAR_EXTERNAL
  counter : UDINT;
END_VAR
p(run := TRUE, starts := counter);
s := 'x]]>y'; (* XML ends a CDATA section at ]]> *)
level := Clamp(x := level + 1, lo := 0, hi := 100);
counter := p.Twice(n := counter);
END_PROGRAM

PROGRAM Idle
VAR
  x : INT;
END_VAR
x := x + 1;
END_PROGRAM

CONFIGURATION Cell
  VAR_GLOBAL
    shared : BOOL;
  END_VAR
  RESOURCE Cpu ON PLC
    VAR_GLOBAL
      local : INT := 4;
    END_VAR
    TASK Fast (INTERVAL := T#5ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#100ms, PRIORITY := 2);
    PROGRAM Main1 WITH Fast : Main;
    PROGRAM Idle1 WITH Slow : Idle;
    PROGRAM Idle2 : Idle;
  END_RESOURCE
END_CONFIGURATION

(* After the CONFIGURATION: the XML holds the GVLs after it (in the project's addData). *)
VAR_GLOBAL CONSTANT
  LIMIT_HI : INT := 90;
END_VAR
VAR_GLOBAL RETAIN
  counter AT %MD4 : UDINT;
END_VAR
)");
    EXPECT_NE(xml.find("<actions>"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<ST>"), std::string::npos);
    EXPECT_NE(xml.find("<xhtml:p><![CDATA["), std::string::npos);
    EXPECT_NE(xml.find("(* the comment stays in the body *)"), std::string::npos);
    EXPECT_EQ(xml.find("ACTION Stop"), std::string::npos) << "the action is an <action>, not text in the body";
    EXPECT_NE(xml.find("<inputVars>"), std::string::npos);
    EXPECT_NE(xml.find("<structValue>"), std::string::npos);
    EXPECT_NE(xml.find("repetitionValue=\"2\""), std::string::npos);
    EXPECT_NE(xml.find("<subrangeUnsigned>"), std::string::npos);
    EXPECT_NE(xml.find("<data name=\"http://www.3s-software.com/plcopenxml/method\" handleUnknown=\"implementation\">"),
              std::string::npos);
    EXPECT_NE(xml.find("<Method name=\"Twice\">"), std::string::npos);
    EXPECT_EQ(xml.find("END_METHOD"), std::string::npos) << "the method is a <Method>, not text in the body";
}

// What the XML cannot say is E0027 at the declaration, and no document.
struct Refused {
    const char* name;
    const char* st;
    const char* message;
};

class PlcopenExportRefuses : public ::testing::TestWithParam<Refused> {};

TEST_P(PlcopenExportRefuses, WithE0027AndNoDocument) {
    TempDir dir;
    dir.write("src/main.st", GetParam().st);
    const Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_TRUE(p.ok()) << rendered(p.diagnostics, p);
    const PlcopenExport exported = exportOf(p);
    EXPECT_TRUE(exported.xml.empty());
    ASSERT_EQ(exported.problems.size(), 1u) << rendered(exported.problems, p);
    EXPECT_EQ(exported.problems[0].code, DiagCode::PlcopenUnsupported);
    const std::string text = rendered(exported.problems, p);
    EXPECT_NE(text.find("src/main.st:"), std::string::npos) << text;
    EXPECT_NE(text.find("error[E0027]"), std::string::npos) << text;
    EXPECT_NE(text.find(GetParam().message), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, PlcopenExportRefuses,
    ::testing::Values(
        Refused{"SfcWithStatements",
                "PROGRAM Seq\nVAR go : BOOL; n : INT; END_VAR\nn := n + 1;\nINITIAL_STEP S1: END_STEP\n"
                "STEP S2: END_STEP\nTRANSITION FROM S1 TO S2 := go; END_TRANSITION\nTRANSITION FROM S2 TO S1 := "
                "NOT go; END_TRANSITION\nEND_PROGRAM\n",
                "'Seq' has statements beside its SFC chart"},
        Refused{"SfcNamedTransition",
                "PROGRAM Seq\nVAR go : BOOL; END_VAR\nINITIAL_STEP S1: END_STEP\nSTEP S2: END_STEP\n"
                "TRANSITION Go1 FROM S1 TO S2 := go; END_TRANSITION\nTRANSITION FROM S2 TO S1 := NOT go; "
                "END_TRANSITION\nEND_PROGRAM\n",
                "'Seq': a named transition, or one with a body, is not exported yet"},
        Refused{"FinalProperty",
                "FUNCTION_BLOCK Fb\nVAR x : INT; END_VAR\nPROPERTY FINAL Value : INT\nGET\nValue := x;\nEND_GET\n"
                "END_PROPERTY\nEND_FUNCTION_BLOCK\n",
                "'Fb.Value': ABSTRACT, FINAL and OVERRIDE on a PROPERTY"},
        Refused{"FinalMethod",
                "FUNCTION_BLOCK Fb\nVAR x : INT; END_VAR\nMETHOD FINAL Bump\nx := x + 1;\nEND_METHOD\n"
                "END_FUNCTION_BLOCK\n",
                "'Fb.Bump': ABSTRACT, FINAL and OVERRIDE on a METHOD"},
        Refused{"RefTo", "PROGRAM P\nVAR x : INT; r : REF_TO INT; END_VAR\nr := REF(x);\nEND_PROGRAM\n",
                "REF_TO and REFERENCE TO have no PLCopen XML form"},
        Refused{"InlineStruct", "PROGRAM P\nVAR s : STRUCT a : INT; END_STRUCT; END_VAR\ns.a := 1;\nEND_PROGRAM\n",
                "a STRUCT written inside a variable's type"},
        Refused{"EdgeInput", "FUNCTION_BLOCK Fb\nVAR_INPUT go : BOOL R_EDGE; END_VAR\nEND_FUNCTION_BLOCK\n",
                "R_EDGE and F_EDGE"},
        Refused{"StringLengthConstant",
                "VAR_GLOBAL CONSTANT N : INT := 4; END_VAR\nPROGRAM P\nVAR s : STRING[N]; END_VAR\n"
                "s := 'a';\nEND_PROGRAM\n",
                "the STRING length 'N' is not a number"}),
    [](const ::testing::TestParamInfo<Refused>& info) { return std::string(info.param.name); });

TEST(PlcopenExport, AProjectOfPlcopenXmlIsRefused) {
    TempDir dir;
    dir.write("src/plant.xml", "<?xml version=\"1.0\"?>\n<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\">"
                               "<types><dataTypes/><pous><pou name=\"P\" pouType=\"program\"><body><ST><xhtml:p "
                               "xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">;</xhtml:p></ST></body></pou></pous>"
                               "</types></project>\n");
    const Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_TRUE(p.ok()) << rendered(p.diagnostics, p);
    const PlcopenExport exported = exportOf(p);
    EXPECT_TRUE(exported.xml.empty());
    ASSERT_EQ(exported.problems.size(), 1u);
    EXPECT_NE(rendered(exported.problems, p).find("src/plant.xml is PLCopen XML already"), std::string::npos)
        << rendered(exported.problems, p);
}

} // namespace
} // namespace takt::compiler
