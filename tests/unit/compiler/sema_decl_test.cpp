// The declaration phase: scopes across files, types, POUs, OO relations, globals, configuration
// and direct addresses. Each diagnostic is pinned to its code, file, line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sema/context.h"
#include "sema_test_support.h"

namespace takt::compiler {
namespace {

using Where = std::vector<std::string>;

std::string readFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(SemaDecl, BenchmarkProgramsHaveNoErrors) {
    const std::filesystem::path dir = "/work/shared/bench-programs";
    if (!std::filesystem::exists(dir)) {
        GTEST_SKIP() << "no benchmark programs on this machine";
    }
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".st") {
            continue;
        }
        ++files;
        test::Analysis a({{entry.path().filename().string(), readFile(entry.path())}});
        EXPECT_EQ(a.errors(), 0u) << entry.path() << "\n" << a.rendered();
        EXPECT_FALSE(a.model().programInstances.empty()) << entry.path();
    }
    EXPECT_GT(files, 0);
}

TEST(SemaDecl, StandardLibraryPreludeIsCleanAndComplete) {
    SourceFile prelude(0, "<stdlib>", std::string(sema::standardFbSource(VendorProfile::Mitsubishi)));
    DiagnosticSink diags;
    const ast::CompilationUnit unit = parseSource(prelude, diags);
    EXPECT_EQ(diags.errorCount(), 0u) << renderHuman(diags.diagnostics(), SourceManager());
    test::Analysis empty("");
    EXPECT_EQ(empty.diags.diagnostics().size(), 0u) << empty.rendered();
    for (const char* fb : {"TON", "TOF", "TP", "R_TRIG", "F_TRIG", "CTU", "CTD", "CTUD", "SR", "RS"}) {
        const Symbol* s = empty.symbol(fb);
        ASSERT_NE(s, nullptr) << fb;
        EXPECT_EQ(s->span.file, kStdlibFile) << fb;
        EXPECT_GT(s->type->size, 0u) << fb;
    }
    EXPECT_EQ(empty.symbol("MAX")->kind, SymbolKind::StandardFunction);
    EXPECT_EQ(dumpSymbols(empty.model()), "");
}

TEST(SemaDecl, DeclarationsOfEveryKindAreCollected) {
    test::Analysis a(R"(NAMESPACE Lib
TYPE Mode : (Idle, Run); END_TYPE
INTERFACE IRun
    METHOD Start : BOOL
    VAR_INPUT speed : REAL; END_VAR
    END_METHOD
END_INTERFACE
FUNCTION_BLOCK Motor IMPLEMENTS IRun
    VAR_INPUT enable : BOOL; END_VAR
    VAR_OUTPUT running : BOOL; END_VAR
    VAR state : Mode; END_VAR
    METHOD Start : BOOL
    VAR_INPUT speed : REAL; END_VAR
    Start := TRUE;
    END_METHOD
END_FUNCTION_BLOCK
END_NAMESPACE
USING Lib;
VAR_GLOBAL
    gCount : DINT;
END_VAR
FUNCTION Twice : INT
VAR_INPUT x : INT; END_VAR
Twice := x * 2;
END_FUNCTION
PROGRAM Main
VAR
    m : Motor;
    n : Lib.Motor;
    r : REF_TO Motor;
END_VAR
END_PROGRAM
CONFIGURATION Cfg
    RESOURCE Res ON PLC
        TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
        PROGRAM P1 WITH Fast : Main;
    END_RESOURCE
END_CONFIGURATION
)");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const Symbol* motor = a.symbol("Lib.Motor");
    ASSERT_NE(motor, nullptr);
    EXPECT_EQ(motor->interfaces.size(), 1u);
    ASSERT_EQ(motor->params.size(), 2u);
    EXPECT_EQ(motor->params[0]->name, "enable");
    EXPECT_EQ(a.type("Main.m"), motor->type);
    EXPECT_EQ(a.type("Main.n"), motor->type);
    const Symbol* twice = a.symbol("Twice");
    EXPECT_EQ(twice->type->name(), "INT");
    EXPECT_EQ(a.model().configurations.size(), 1u);
    ASSERT_EQ(a.model().tasks.size(), 1u);
    EXPECT_EQ(a.model().tasks[0]->taskInterval, 10'000'000);
    EXPECT_EQ(a.model().tasks[0]->taskPriority, 1);
    ASSERT_EQ(a.model().programInstances.size(), 1u);
    EXPECT_EQ(a.model().programInstances[0]->taskSymbol, a.model().tasks[0]);
    EXPECT_EQ(a.model().globals.size(), 1u);
    // User POUs in source order first, the standard FBs after them.
    ASSERT_GE(a.model().pous.size(), 4u);
    EXPECT_EQ(a.model().pous[0], motor);
    EXPECT_EQ(a.model().pous[1]->name, "Start");
    EXPECT_EQ(a.model().pous[2], twice);
    EXPECT_EQ(a.model().pous.back()->span.file, kStdlibFile);
}

TEST(SemaDecl, DuplicateInOneScopeWithRelatedLocation) {
    test::Analysis a("PROGRAM Main\nVAR\n    x : INT;\n    x : BOOL;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("E0101"), Where{"main.st:4:5"});
    const Diagnostic* d = a.first("E0101");
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->related.size(), 1u);
    EXPECT_EQ(a.where(d->related[0].span), "main.st:3:5");
    EXPECT_NE(d->message.find("'x'"), std::string::npos);
}

TEST(SemaDecl, DuplicatePouAcrossFilesIsReportedInTheSecondFile) {
    test::Analysis a({{"a.st", "FUNCTION_BLOCK Motor\nEND_FUNCTION_BLOCK\n"},
                      {"b.st", "\nFUNCTION_BLOCK motor\nEND_FUNCTION_BLOCK\n"}});
    EXPECT_EQ(a.at("E0101"), Where{"b.st:2:16"});
    const Diagnostic* d = a.first("E0101");
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->related.size(), 1u);
    EXPECT_EQ(a.where(d->related[0].span), "a.st:1:16");
}

TEST(SemaDecl, ExternalInSecondFileMatchesGlobalInFirst) {
    test::Analysis ok({{"globals.st", "VAR_GLOBAL\n    speed : REAL;\nEND_VAR\n"},
                       {"main.st", "PROGRAM Main\nVAR_EXTERNAL\n    speed : REAL;\nEND_VAR\nEND_PROGRAM\n"}});
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();
    EXPECT_EQ(ok.symbol("Main.speed")->target, ok.model().globals.at(0));

    test::Analysis bad({{"globals.st", "VAR_GLOBAL\n    speed : REAL;\nEND_VAR\n"},
                        {"main.st", "PROGRAM Main\nVAR_EXTERNAL\n    speed : INT;\n    missing : BOOL;\nEND_VAR\n"
                                    "END_PROGRAM\n"}});
    EXPECT_EQ(bad.at("E0108"), Where{"main.st:3:5"}) << bad.rendered();
    EXPECT_EQ(bad.at("E0107"), Where{"main.st:4:5"}) << bad.rendered();
}

TEST(SemaDecl, LocalHidingAGlobalIsAWarning) {
    test::Analysis a("VAR_GLOBAL\n    speed : REAL;\nEND_VAR\nPROGRAM Main\nVAR\n    speed : REAL;\nEND_VAR\n"
                     "VAR_EXTERNAL\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("W0008"), Where{"main.st:6:5"}) << a.rendered();
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    test::Analysis ext(
        "VAR_GLOBAL\n    speed : REAL;\nEND_VAR\nPROGRAM Main\nVAR_EXTERNAL\n    speed : REAL;\nEND_VAR\n"
        "END_PROGRAM\n");
    EXPECT_TRUE(ext.at("W0008").empty()) << ext.rendered();
}

TEST(SemaDecl, NamespacesMergeAcrossFiles) {
    test::Analysis a({{"a.st", "NAMESPACE Plant.Line\nTYPE Speed : REAL; END_TYPE\nEND_NAMESPACE\n"},
                      {"b.st", "NAMESPACE Plant\nNAMESPACE Line\nFUNCTION_BLOCK Conveyor\nVAR v : Speed; END_VAR\n"
                               "END_FUNCTION_BLOCK\nEND_NAMESPACE\nEND_NAMESPACE\n"
                               "PROGRAM Main\nVAR c : Plant.Line.Conveyor; x : Plant.Nope.T; END_VAR\nEND_PROGRAM\n"}});
    EXPECT_NE(a.symbol("Plant.Line.Conveyor"), nullptr);
    EXPECT_EQ(a.type("Plant.Line.Conveyor.v")->name(), "Plant.Line.Speed");
    EXPECT_EQ(a.at("E0109"), Where{"b.st:9:40"}) << a.rendered();
    EXPECT_NE(a.first("E0109")->message.find("'Plant.Nope'"), std::string::npos);
    EXPECT_TRUE(a.at("E0102").empty()) << a.rendered(); // one mistake, one diagnostic
}

TEST(SemaDecl, UnknownTypesAndNonTypes) {
    test::Analysis a("FUNCTION F : INT\nEND_FUNCTION\nPROGRAM Main\nVAR\n    a : Mtor;\n    b : F;\nEND_VAR\n"
                     "END_PROGRAM\n");
    EXPECT_EQ(a.at("E0102"), Where{"main.st:5:9"}) << a.rendered();
    EXPECT_EQ(a.at("E0112"), Where{"main.st:6:9"}) << a.rendered();
}

TEST(SemaDecl, UserTypes) {
    test::Analysis a(R"(TYPE
    Color : BYTE (Red := 1, Green, Blue := 10);
    Level : INT (0..100) := 50;
    Matrix : ARRAY [1..2, 1..3] OF LREAL;
    Name : STRING[20];
    PInt : REF_TO INT;
    Node : STRUCT value : INT; next : REF_TO Node; END_STRUCT;
END_TYPE
)");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const auto* color = static_cast<const EnumType*>(a.type("Color"));
    ASSERT_EQ(color->kind(), TypeKind::Enum);
    EXPECT_EQ(color->base->name(), "BYTE");
    EXPECT_EQ(color->size, 1u);
    ASSERT_EQ(color->values.size(), 3u);
    EXPECT_EQ(color->values[1].value, 2);
    EXPECT_EQ(color->values[2].value, 10);
    EXPECT_EQ(a.type("Level")->kind(), TypeKind::Alias);
    EXPECT_EQ(a.symbol("Level")->init != nullptr, true);
    EXPECT_EQ(stripAlias(a.type("Matrix"))->size, 48u);
    EXPECT_EQ(stripAlias(a.type("Name"))->size, 21u);
    EXPECT_EQ(stripAlias(a.type("PInt"))->kind(), TypeKind::Ref);
    const auto* node = static_cast<const StructType*>(a.type("Node"));
    EXPECT_EQ(static_cast<const RefType*>(node->fields[1].type)->target, node);
}

TEST(SemaDecl, InvalidEnumBase) {
    test::Analysis a("TYPE E : REAL (A, B); END_TYPE\nTYPE W : WORD (C, D); END_TYPE\n");
    EXPECT_EQ(a.at("E0215"), Where{"main.st:1:10"}) << a.rendered();
}

TEST(SemaDecl, RecursiveTypesAndInstances) {
    test::Analysis a(R"(TYPE Node : STRUCT
    next : Node;
END_STRUCT; END_TYPE
FUNCTION_BLOCK Fb
VAR
    inner : Fb;
END_VAR
END_FUNCTION_BLOCK
FUNCTION_BLOCK A
VAR b : B; END_VAR
END_FUNCTION_BLOCK
FUNCTION_BLOCK B
VAR a : A; END_VAR
END_FUNCTION_BLOCK
)");
    EXPECT_EQ(a.at("E0110"), Where{"main.st:2:12"}) << a.rendered();
    EXPECT_EQ(a.at("E0111"), (Where{"main.st:6:5", "main.st:13:5"})) << a.rendered();
}

TEST(SemaDecl, ConstantWithoutInitialiser) {
    test::Analysis a("PROGRAM Main\nVAR CONSTANT\n    k : INT;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("E0508"), Where{"main.st:3:5"}) << a.rendered();
}

TEST(SemaDecl, SectionsPerPouKind) {
    test::Analysis a(R"(FUNCTION_BLOCK Fb
VAR_GLOBAL
    g : INT;
END_VAR
END_FUNCTION_BLOCK
PROGRAM Main
VAR_INPUT i : INT; END_VAR
VAR_IN_OUT io : INT; END_VAR
VAR_GLOBAL pg : INT; END_VAR
END_PROGRAM
FUNCTION F : INT
VAR
    x AT %IX0.0 : BOOL;
END_VAR
END_FUNCTION
)");
    EXPECT_EQ(a.at("E0015"), Where{"main.st:2:1"}) << a.rendered();
    EXPECT_EQ(a.at("E0610"), Where{"main.st:13:10"}) << a.rendered();
}

TEST(SemaDecl, QualifiersPerSection) {
    test::Analysis a(R"(FUNCTION F : INT
VAR_INPUT CONSTANT
    a : INT := 1;
END_VAR
VAR RETAIN
    b : INT;
END_VAR
END_FUNCTION
PROGRAM Main
VAR RETAIN
    kept : INT;
END_VAR
END_PROGRAM
)");
    EXPECT_EQ(a.at("E0016"), (Where{"main.st:2:1", "main.st:5:1"})) << a.rendered();
    EXPECT_TRUE(a.symbol("Main.kept")->retain);
}

TEST(SemaDecl, InterfaceCycles) {
    test::Analysis a("INTERFACE I1 EXTENDS I2\nEND_INTERFACE\nINTERFACE I2 EXTENDS I1\nEND_INTERFACE\n");
    EXPECT_EQ(a.at("E0705"), Where{"main.st:1:22"}) << a.rendered();
}

TEST(SemaDecl, InheritanceErrors) {
    test::Analysis a(R"(INTERFACE I
    METHOD Go : BOOL
    VAR_INPUT n : INT; END_VAR
    END_METHOD
END_INTERFACE
TYPE T : INT; END_TYPE
FUNCTION_BLOCK A EXTENDS B
END_FUNCTION_BLOCK
FUNCTION_BLOCK B EXTENDS A
END_FUNCTION_BLOCK
FUNCTION_BLOCK C IMPLEMENTS T
END_FUNCTION_BLOCK
FUNCTION_BLOCK D EXTENDS I
END_FUNCTION_BLOCK
FUNCTION_BLOCK E IMPLEMENTS I
END_FUNCTION_BLOCK
FUNCTION_BLOCK F IMPLEMENTS I
    METHOD Go : BOOL
    VAR_INPUT n : DINT; END_VAR
    END_METHOD
END_FUNCTION_BLOCK
)");
    EXPECT_EQ(a.at("E0705"), Where{"main.st:7:26"}) << a.rendered();
    EXPECT_EQ(a.at("E0708"), Where{"main.st:11:29"}) << a.rendered();
    EXPECT_EQ(a.at("E0709"), Where{"main.st:13:26"}) << a.rendered();
    EXPECT_EQ(a.at("E0702"), Where{"main.st:15:29"}) << a.rendered();
    EXPECT_EQ(a.at("E0706"), Where{"main.st:18:12"}) << a.rendered();
}

TEST(SemaDecl, DerivedFbInheritsMembersAndParameters) {
    test::Analysis a(R"(FUNCTION_BLOCK Base
VAR_INPUT x : INT; END_VAR
METHOD Run : INT
END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Derived EXTENDS Base
VAR_INPUT y : INT; END_VAR
METHOD Run : INT
END_METHOD
END_FUNCTION_BLOCK
PROGRAM Main
VAR d : Derived; r : REF_TO Base; END_VAR
r := REF(d);
END_PROGRAM
)");
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const Symbol* derived = a.symbol("Derived");
    EXPECT_EQ(derived->base, a.symbol("Base"));
    ASSERT_EQ(derived->params.size(), 2u);
    EXPECT_EQ(derived->params[0]->name, "x");
    // Derived overrides Run: the root of the hierarchy reserves the 4-byte dispatch header,
    // then x (Base, padded to 4), then y.
    EXPECT_EQ(a.symbol("Base")->dispatchHeader, 4u);
    EXPECT_EQ(derived->dispatchHeader, 0u);
    EXPECT_EQ(derived->type->size, 12u);
}

TEST(SemaDecl, StandardLibraryNamesCanBeRedefined) {
    // A user FUNCTION_BLOCK TON and a user FUNCTION MAX replace the standard ones (W1011).
    test::Analysis a("FUNCTION_BLOCK TON\nEND_FUNCTION_BLOCK\nFUNCTION MAX : INT\nEND_FUNCTION\n"
                     "PROGRAM Main\nVAR t : TON; END_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(a.at("W1011"), (Where{"main.st:1:16", "main.st:3:10"})) << a.rendered();
    EXPECT_EQ(static_cast<const PouType*>(stripAlias(a.type("Main.t")))->symbol->span.file, a.symbol("TON")->span.file);
    EXPECT_NE(a.symbol("TON")->span.file, kStdlibFile);
    test::Analysis vars("PROGRAM Main\nVAR\n    len : INT;\n    ton : BOOL;\nEND_VAR\nEND_PROGRAM\n");
    // Locals may be named like standard functions (len); like standard FBs (ton) only with W1011.
    EXPECT_EQ(vars.at("E0114"), Where{}) << vars.rendered();
    EXPECT_EQ(vars.at("W1011"), (Where{"main.st:4:5"})) << vars.rendered();
    test::Analysis ok("PROGRAM Main\nVAR t : TON; c : CTU; END_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(ok.errors(), 0u) << ok.rendered();
    EXPECT_EQ(stripAlias(ok.type("Main.t"))->kind(), TypeKind::FunctionBlock);
}

TEST(SemaDecl, TasksAndProgramInstances) {
    test::Analysis a(R"(FUNCTION_BLOCK Fb
END_FUNCTION_BLOCK
PROGRAM Main
END_PROGRAM
CONFIGURATION Cfg
VAR_GLOBAL trigger : BOOL; level : INT; END_VAR
RESOURCE Res ON PLC
    TASK T1 (INTERVAL := 5, PRIORITY := 1);
    TASK T2 (INTERVAL := T#1s, PRIORITY := -1);
    TASK T3 (SINGLE := level, PRIORITY := 2);
    TASK T4 (SINGLE := trigger, PRIORITY := 3);
    PROGRAM P1 WITH Nope : Main;
    PROGRAM P2 WITH T1 : Fb;
    PROGRAM P3 WITH T1 : Missing;
    PROGRAM P4 WITH T4 : Main (nope := trigger);
END_RESOURCE
END_CONFIGURATION
)");
    EXPECT_EQ(a.at("E0607"), (Where{"main.st:8:26", "main.st:9:44", "main.st:10:24"})) << a.rendered();
    EXPECT_EQ(a.at("E0606"), Where{"main.st:12:21"}) << a.rendered();
    EXPECT_EQ(a.at("E0609"), Where{"main.st:13:26"}) << a.rendered();
    EXPECT_EQ(a.at("E0103"), Where{"main.st:14:26"}) << a.rendered();
    EXPECT_EQ(a.at("E0302"), Where{"main.st:15:32"}) << a.rendered();
    const Symbol* t4 = a.symbol("Cfg.Res.T4");
    ASSERT_NE(t4, nullptr);
    EXPECT_EQ(t4->taskSingle, a.symbol("Cfg.trigger"));
}

TEST(SemaDecl, VarConfigResolvesWildcards) {
    test::Analysis a(R"(PROGRAM Main
VAR
    other AT %IX* : BOOL;
    sensor AT %IX* : BOOL;
    valve AT %Q* : BOOL;
    plain AT %IX0.0 : BOOL;
    lost AT %I* : BOOL;
END_VAR
END_PROGRAM
CONFIGURATION Cfg
RESOURCE Res ON PLC
    TASK T (INTERVAL := T#10ms, PRIORITY := 1);
    PROGRAM P WITH T : Main;
END_RESOURCE
VAR_CONFIG
    Res.P.sensor AT %IX4.2 : BOOL;
    Res.P.valve AT %QX1.0 : BOOL;
    Res.P.plain AT %IX1.0 : BOOL;
    Res.P.nothing AT %IX1.1 : BOOL;
    Res.P.other AT %IX5.0 : INT;
END_VAR
END_CONFIGURATION
)");
    EXPECT_EQ(a.at("E0608"), Where{"main.st:18:5"}) << a.rendered();
    EXPECT_EQ(a.at("E0604"), Where{"main.st:19:11"}) << a.rendered();
    EXPECT_EQ(a.at("E0603"), Where{"main.st:7:13"}) << a.rendered();
    EXPECT_EQ(a.at("E0201"), Where{"main.st:20:29"}) << a.rendered();
    const Symbol* sensor = a.symbol("Main.sensor");
    ASSERT_TRUE(sensor->resolvedAddress.has_value());
    EXPECT_EQ(sensor->resolvedAddress->text(), "%IX4.2");
    ASSERT_EQ(a.model().configBindings.size(), 3u);
    EXPECT_EQ(a.model().configBindings[0].path.back(), sensor);
}

TEST(SemaDecl, VarAccessPaths) {
    test::Analysis a(R"(PROGRAM Main
VAR speed : REAL; count : INT; END_VAR
END_PROGRAM
CONFIGURATION Cfg
RESOURCE Res ON PLC
    TASK T (INTERVAL := T#10ms, PRIORITY := 1);
    PROGRAM P WITH T : Main;
END_RESOURCE
VAR_ACCESS
    aSpeed : Res.P.speed : REAL READ_WRITE;
    aCount : Res.P.count : REAL READ_ONLY;
    aNone : Res.P.none : INT READ_ONLY;
END_VAR
END_CONFIGURATION
)");
    EXPECT_EQ(a.at("E0201"), Where{"main.st:11:28"}) << a.rendered();
    EXPECT_EQ(a.at("E0604"), Where{"main.st:12:19"}) << a.rendered();
    ASSERT_GE(a.model().accessPaths.size(), 2u);
    const Symbol* s = a.model().accessPaths[0];
    EXPECT_FALSE(s->readOnly);
    EXPECT_EQ(s->target, a.symbol("Main.speed"));
    EXPECT_TRUE(a.model().accessPaths[1]->readOnly);
}

TEST(SemaDecl, AddressSizeMustMatchType) {
    test::Analysis a(R"(VAR_GLOBAL
    b1 AT %IX0.0 : BOOL;
    b2 AT %IB1 : BYTE;
    w1 AT %IW1 : INT;
    d1 AT %ID1 : REAL;
    l1 AT %IL1 : LWORD;
    bad1 AT %IX0.1 : INT;
    bad2 AT %IW4 : DINT;
    bad3 AT %QB0 : BOOL;
    bad4 AT %QD0 : TIME;
END_VAR
)");
    EXPECT_EQ(a.at("E0602"), (Where{"main.st:7:13", "main.st:9:13", "main.st:10:13"})) << a.rendered();
    EXPECT_EQ(a.at("W1017"), (Where{"main.st:8:13"})) << a.rendered(); // a DINT from word 4's first byte
}

TEST(SemaDecl, MalformedAddresses) {
    test::Analysis a("VAR_GLOBAL\n    a AT %IX0.1.2 : BOOL;\n    b AT %IB1.2 : BYTE;\nEND_VAR\n");
    EXPECT_EQ(a.at("E0601"), (Where{"main.st:2:10", "main.st:3:10"})) << a.rendered();
}

TEST(SemaDecl, OverlapsDependOnAddressMode) {
    const std::string text =
        "VAR_GLOBAL\n    w AT %IW1 : WORD;\n    b AT %IB2 : BYTE;\n    x AT %IX3.0 : BOOL;\nEND_VAR\n";
    // Word mode: %IW1 is bytes 2..3, so %IB2 and %IX3.0 overlap it.
    test::Analysis word(text);
    EXPECT_EQ(word.at("W0009"), (Where{"main.st:3:5", "main.st:4:5"})) << word.rendered();
    EXPECT_EQ(word.errors(), 0u);
    // Byte mode: %IW1 is bytes 1..2: %IB2 overlaps, %IX3.0 does not.
    AnalysisOptions byteMode;
    byteMode.addressMode = AddressMode::Byte;
    test::Analysis byte(text, byteMode);
    EXPECT_EQ(byte.at("W0009"), Where{"main.st:3:5"}) << byte.rendered();
}

TEST(SemaDecl, DumpSymbolsIsStableAndExcludesTheStandardLibrary) {
    const std::string one = "TYPE Mode : (Idle, Run); END_TYPE\nPROGRAM Main\nVAR counter : INT; t : TON; END_VAR\n"
                            "END_PROGRAM\n";
    const std::string two = "program   MAIN\n  var\n t: ton;\n counter :INT; end_var end_program\n"
                            "type Mode : ( Idle , Run ) ; end_type\n";
    test::Analysis a(one);
    test::Analysis b(two);
    ASSERT_EQ(a.errors(), 0u) << a.rendered();
    const std::string dump = dumpSymbols(a.model());
    EXPECT_NE(dump.find("PROGRAM Main\n"), std::string::npos) << dump;
    EXPECT_NE(dump.find("Main.counter : INT (VAR)\n"), std::string::npos) << dump;
    EXPECT_NE(dump.find("TYPE Mode : (Idle := 0, Run := 1)\n"), std::string::npos) << dump;
    EXPECT_EQ(dump.find("TON\n"), std::string::npos) << dump;
    EXPECT_EQ(dump.find("FUNCTION_BLOCK"), std::string::npos) << dump;
    // Reordered, re-cased and re-spaced sources give the same listing apart from the spelling.
    EXPECT_EQ(upperName(dump), upperName(dumpSymbols(b.model())));
}

} // namespace
} // namespace takt::compiler
