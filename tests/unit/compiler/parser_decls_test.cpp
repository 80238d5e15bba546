// Declarations: POUs, methods, interfaces, types, variable sections, configurations,
// namespaces — checked through the S-expression dump.
#include <gtest/gtest.h>

#include "parser_test_util.h"

namespace takt::compiler {
namespace {

using testing::parseText;

std::string dumpOf(const std::string& text) {
    auto p = parseText(text);
    EXPECT_TRUE(p->diags.diagnostics().empty()) << text << "\n" << p->messages();
    return p->dump();
}

TEST(ParserDecl, ProgramFunctionAndFunctionBlock) {
    EXPECT_EQ(dumpOf("FUNCTION Add3 : INT\n"
                     "VAR_INPUT a, b, c : INT; END_VAR\n"
                     "Add3 := a + b + c;\n"
                     "END_FUNCTION\n"
                     "FUNCTION NoResult\n"
                     "END_FUNCTION\n"),
              "(FUNCTION Add3 : INT\n"
              "  (VAR_INPUT\n"
              "    (var (a b c) INT))\n"
              "  (body\n"
              "    (:= Add3 (+ (+ a b) c))))\n"
              "(FUNCTION NoResult\n"
              "  (body))\n");
    EXPECT_EQ(dumpOf("FUNCTION_BLOCK PUBLIC ABSTRACT Motor EXTENDS Base.Device IMPLEMENTS IRun, IStop\n"
                     "END_FUNCTION_BLOCK\n"
                     "FUNCTION_BLOCK FINAL Leaf EXTENDS Motor END_FUNCTION_BLOCK\n"),
              "(FUNCTION_BLOCK Motor PUBLIC ABSTRACT (EXTENDS Base.Device) (IMPLEMENTS IRun IStop)\n"
              "  (body))\n"
              "(FUNCTION_BLOCK Leaf FINAL (EXTENDS Motor)\n"
              "  (body))\n");
}

TEST(ParserDecl, MethodsInFunctionBlocksAndPrograms) {
    EXPECT_EQ(dumpOf("FUNCTION_BLOCK Fb\n"
                     "VAR x : INT; END_VAR\n"
                     "METHOD PUBLIC Get : INT\n"
                     "  Get := x;\n"
                     "END_METHOD\n"
                     "METHOD PRIVATE FINAL Reset\n"
                     "VAR_INPUT v : INT; END_VAR\n"
                     "  THIS^.x := v;\n"
                     "END_METHOD\n"
                     "x := x + 1;\n"
                     "END_FUNCTION_BLOCK\n"
                     "PROGRAM P\n"
                     "METHOD M END_METHOD\n"
                     "END_PROGRAM\n"),
              "(FUNCTION_BLOCK Fb\n"
              "  (VAR\n"
              "    (var (x) INT))\n"
              "  (METHOD Get PUBLIC : INT\n"
              "    (body\n"
              "      (:= Get x)))\n"
              "  (METHOD Reset PRIVATE FINAL\n"
              "    (VAR_INPUT\n"
              "      (var (v) INT))\n"
              "    (body\n"
              "      (:= (. (^ THIS) x) v)))\n"
              "  (body\n"
              "    (:= x (+ x 1))))\n"
              "(PROGRAM P\n"
              "  (METHOD M\n"
              "    (body))\n"
              "  (body))\n");
}

TEST(ParserDecl, InterfacesAndTestPous) {
    EXPECT_EQ(dumpOf("INTERFACE IRun EXTENDS IBase, IOther\n"
                     "METHOD Start : BOOL\n"
                     "VAR_INPUT speed : REAL; END_VAR\n"
                     "END_METHOD\n"
                     "METHOD Stop END_METHOD\n"
                     "END_INTERFACE\n"
                     "TEST_PROGRAM T1\n"
                     "ASSERT_EQUAL(1, 1);\n"
                     "END_TEST_PROGRAM\n"
                     "TEST_FUNCTION_BLOCK T2 END_TEST_FUNCTION_BLOCK\n"),
              "(INTERFACE IRun (EXTENDS IBase IOther)\n"
              "  (METHOD Start prototype : BOOL\n"
              "    (VAR_INPUT\n"
              "      (var (speed) REAL)))\n"
              "  (METHOD Stop prototype))\n"
              "(TEST_PROGRAM T1\n"
              "  (body\n"
              "    (expr (call ASSERT_EQUAL 1 1))))\n"
              "(TEST_FUNCTION_BLOCK T2\n"
              "  (body))\n");
}

TEST(ParserDecl, TypeBlock) {
    EXPECT_EQ(dumpOf("TYPE\n"
                     "  Mode : (Idle, Run := 5, Stop);\n"
                     "  Small : INT (Low, High := 10);\n"
                     "  Wide : (A, B) DINT := B;\n"
                     "  Pct : INT (0..100) := 50;\n"
                     "  Grid : ARRAY [1..N, -1..2 * N] OF REAL;\n"
                     "  Any : ARRAY [*] OF INT;\n"
                     "  Name : STRING[20];\n"
                     "  WName : WSTRING(10);\n"
                     "  Ptr : REF_TO Point;\n"
                     "  Alias : Lib.Point;\n"
                     "  Point : STRUCT\n"
                     "    x, y : REAL := 1.0;\n"
                     "    tag : STRING;\n"
                     "  END_STRUCT;\n"
                     "  Point3 : STRUCT EXTENDS Point z : REAL; END_STRUCT\n"
                     "  Point4 EXTENDS Point3 : STRUCT w : REAL; END_STRUCT\n"
                     "END_TYPE\n"),
              "(TYPE Mode (enum Idle (Run 5) Stop))\n"
              "(TYPE Small (enum : INT Low (High 10)))\n"
              "(TYPE Wide (enum : DINT A B) (init B))\n"
              "(TYPE Pct (subrange INT 0 100) (init 50))\n"
              "(TYPE Grid (ARRAY (1..N) ((neg 1)..(* 2 N)) OF REAL))\n"
              "(TYPE Any (ARRAY * OF INT))\n"
              "(TYPE Name (STRING 20))\n"
              "(TYPE WName (WSTRING 10))\n"
              "(TYPE Ptr (REF_TO Point))\n"
              "(TYPE Alias Lib.Point)\n"
              "(TYPE Point (STRUCT\n"
              "  (var (x y) REAL (init 1.0))\n"
              "  (var (tag) STRING)))\n"
              "(TYPE Point3 (STRUCT (EXTENDS Point)\n"
              "  (var (z) REAL)))\n"
              "(TYPE Point4 (STRUCT (EXTENDS Point3)\n"
              "  (var (w) REAL)))\n");
}

// CODESYS: POINTER TO / REFERENCE TO start a type only before TO (the words stay names
// elsewhere), UNION is laid out like STRUCT, and `REF=` with nothing between binds.
TEST(ParserDecl, PointerReferenceUnionAndRefAssign) {
    EXPECT_EQ(dumpOf("TYPE\n"
                     "  P : POINTER TO Point;\n"
                     "  R : REFERENCE TO ARRAY [1..2] OF INT;\n"
                     "  U : UNION d : DWORD; b : BYTE; END_UNION\n"
                     "  Pointer : INT;\n"
                     "END_TYPE\n"
                     "PROGRAM Main\n"
                     "VAR pointer : POINTER TO POINTER TO INT; r : REFERENCE TO INT; END_VAR\n"
                     "r REF= x;\n"
                     "END_PROGRAM\n"),
              "(TYPE P (POINTER_TO Point))\n"
              "(TYPE R (REFERENCE_TO (ARRAY (1..2) OF INT)))\n"
              "(TYPE U (UNION\n"
              "  (var (d) DWORD)\n"
              "  (var (b) BYTE)))\n"
              "(TYPE Pointer INT)\n"
              "(PROGRAM Main\n"
              "  (VAR\n"
              "    (var (pointer) (POINTER_TO (POINTER_TO INT)))\n"
              "    (var (r) (REFERENCE_TO INT)))\n"
              "  (body\n"
              "    (REF= r x)))\n");
}

TEST(ParserDecl, VariableSectionsQualifiersAndInitialisers) {
    EXPECT_EQ(dumpOf("PROGRAM P\n"
                     "VAR CONSTANT N : INT := 10; END_VAR\n"
                     "VAR RETAIN r : DINT; END_VAR\n"
                     "VAR PERSISTENT pp : DINT; END_VAR\n"
                     "VAR NON_RETAIN nr : DINT; END_VAR\n"
                     "VAR_TEMP t : INT; END_VAR\n"
                     "VAR_OUTPUT o : BOOL; END_VAR\n"
                     "VAR_IN_OUT io : ARRAY [*] OF INT; END_VAR\n"
                     "VAR_EXTERNAL g : INT; END_VAR\n"
                     "VAR\n"
                     "  a, b : INT := 3;\n"
                     "  arr : ARRAY [0..4] OF INT := [1, 2, 3(0)];\n"
                     "  empty : ARRAY [0..4] OF INT := [5()];\n"
                     "  pts : ARRAY [0..1] OF Point := [(x := 1), (x := 2, y := 3)];\n"
                     "  s : Outer := (x := 1, y := (a := 2));\n"
                     "  t : TON := (PT := T#5s);\n"
                     "  m : ARRAY [0..1, 0..1] OF INT := [[1, 2], [3, 4]];\n"
                     "  in1 AT %IX0.1 : BOOL;\n"
                     "  w AT %I* : WORD;\n"
                     "  st : STRING(10) := 'hi';\n"
                     "  e : (Red, Green) := Green;\n"
                     "END_VAR\n"
                     "END_PROGRAM\n"),
              "(PROGRAM P\n"
              "  (VAR CONSTANT\n"
              "    (var (N) INT (init 10)))\n"
              "  (VAR RETAIN\n"
              "    (var (r) DINT))\n"
              "  (VAR PERSISTENT\n"
              "    (var (pp) DINT))\n"
              "  (VAR NON_RETAIN\n"
              "    (var (nr) DINT))\n"
              "  (VAR_TEMP\n"
              "    (var (t) INT))\n"
              "  (VAR_OUTPUT\n"
              "    (var (o) BOOL))\n"
              "  (VAR_IN_OUT\n"
              "    (var (io) (ARRAY * OF INT)))\n"
              "  (VAR_EXTERNAL\n"
              "    (var (g) INT))\n"
              "  (VAR\n"
              "    (var (a b) INT (init 3))\n"
              "    (var (arr) (ARRAY (0..4) OF INT) (init (array 1 2 (repeat 3 0))))\n"
              "    (var (empty) (ARRAY (0..4) OF INT) (init (array (repeat 5 _))))\n"
              "    (var (pts) (ARRAY (0..1) OF Point) (init (array (struct (x 1)) (struct (x 2) (y 3)))))\n"
              "    (var (s) Outer (init (struct (x 1) (y (struct (a 2))))))\n"
              "    (var (t) TON (init (struct (PT T#5000000000ns))))\n"
              "    (var (m) (ARRAY (0..1) (0..1) OF INT) (init (array (array 1 2) (array 3 4))))\n"
              "    (var (in1) (AT %IX0.1) BOOL)\n"
              "    (var (w) (AT %I*) WORD)\n"
              "    (var (st) (STRING 10) (init \"hi\"))\n"
              "    (var (e) (enum Red Green) (init Green)))\n"
              "  (body))\n");
}

TEST(ParserDecl, GlobalsAccessAndConfigSections) {
    EXPECT_EQ(dumpOf("VAR_GLOBAL RETAIN\n  counter : DINT;\nEND_VAR\n"
                     "VAR_GLOBAL CONSTANT\n  LIMIT : INT := 5;\nEND_VAR\n"
                     "VAR_CONFIG\n  Res.Main.fb.in1 AT %IX1.0 : BOOL;\n  Main.arr[2] AT %QW3 : WORD := 7;\nEND_VAR\n"
                     "VAR_ACCESS\n  speed : Res.Main.v : INT READ_WRITE;\n  lamp : %QX0.0 : BOOL;\nEND_VAR\n"),
              "(globals\n"
              "  (VAR_GLOBAL RETAIN\n"
              "    (var (counter) DINT)))\n"
              "(globals\n"
              "  (VAR_GLOBAL CONSTANT\n"
              "    (var (LIMIT) INT (init 5))))\n"
              "(globals\n"
              "  (VAR_CONFIG\n"
              "    (config (. (. (. Res Main) fb) in1) %IX1.0 BOOL)\n"
              "    (config (index (. Main arr) 2) %QW3 WORD (init 7))))\n"
              "(globals\n"
              "  (VAR_ACCESS\n"
              "    (access speed (. (. Res Main) v) INT READ_WRITE)\n"
              "    (access lamp %QX0.0 BOOL READ_ONLY)))\n");
}

TEST(ParserDecl, ConfigurationResourcesTasksAndPrograms) {
    EXPECT_EQ(dumpOf("CONFIGURATION Cell\n"
                     "  VAR_GLOBAL g : INT; END_VAR\n"
                     "  RESOURCE Cpu ON PLC\n"
                     "    VAR_GLOBAL rg : BOOL; END_VAR\n"
                     "    TASK Fast(INTERVAL := T#10ms, PRIORITY := 1);\n"
                     "    TASK Ev(SINGLE := trig, PRIORITY := 2);\n"
                     "    PROGRAM p1 WITH Fast : Main (a := x, b => y);\n"
                     "    PROGRAM RETAIN p2 : Lib.Other;\n"
                     "  END_RESOURCE\n"
                     "END_CONFIGURATION\n"
                     "CONFIGURATION Simple\n"
                     "  TASK t(INTERVAL := T#1ms);\n"
                     "  PROGRAM p WITH t : Main;\n"
                     "END_CONFIGURATION\n"),
              "(CONFIGURATION Cell\n"
              "  (VAR_GLOBAL\n"
              "    (var (g) INT))\n"
              "  (RESOURCE Cpu ON PLC\n"
              "    (VAR_GLOBAL\n"
              "      (var (rg) BOOL))\n"
              "    (TASK Fast (INTERVAL T#10000000ns) (PRIORITY 1))\n"
              "    (TASK Ev (PRIORITY 2) (SINGLE trig))\n"
              "    (PROGRAM p1 WITH Fast : Main (:= a x) (=> b y))\n"
              "    (PROGRAM RETAIN p2 : Lib.Other)))\n"
              "(CONFIGURATION Simple\n"
              "  (RESOURCE _\n"
              "    (TASK t (INTERVAL T#1000000ns))\n"
              "    (PROGRAM p WITH t : Main)))\n");
}

TEST(ParserDecl, NamespacesAndUsing) {
    EXPECT_EQ(dumpOf("NAMESPACE Plant.Line\n"
                     "  USING Lib, Lib.Util;\n"
                     "  NAMESPACE Inner\n"
                     "    FUNCTION F : INT F := 1; END_FUNCTION\n"
                     "  END_NAMESPACE\n"
                     "  TYPE T : INT; END_TYPE\n"
                     "END_NAMESPACE\n"),
              "(NAMESPACE Plant.Line\n"
              "  (USING Lib Lib.Util)\n"
              "  (NAMESPACE Inner\n"
              "    (FUNCTION F : INT\n"
              "      (body\n"
              "        (:= F 1))))\n"
              "  (TYPE T INT))\n");
}

TEST(ParserDecl, KeywordsAndNamesAreCaseInsensitive) {
    EXPECT_EQ(dumpOf("program Main var X : int; end_var if x then x := 1; end_if end_program"),
              "(PROGRAM Main\n"
              "  (VAR\n"
              "    (var (X) int))\n"
              "  (body\n"
              "    (IF\n"
              "      (cond x\n"
              "        (:= x 1)))))\n");
}

TEST(ParserDecl, ElementaryTypeNamesAreOrdinaryIdentifiers) {
    // A field called DATE parses: elementary type names are not reserved words.
    EXPECT_EQ(dumpOf("TYPE Rec : STRUCT date : DATE; time : TIME; END_STRUCT END_TYPE"),
              "(TYPE Rec (STRUCT\n  (var (date) DATE)\n  (var (time) TIME)))\n");
}

} // namespace
} // namespace takt::compiler
