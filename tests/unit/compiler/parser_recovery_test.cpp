// Error recovery, nesting limits, robustness on malformed input, and the benchmark programs.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "parser_test_util.h"
#include "support/paths.h"

namespace takt::compiler {
namespace {

using testing::parseText;

std::vector<std::string> declNames(const ast::CompilationUnit& unit) {
    std::vector<std::string> out;
    for (const auto& d : unit.decls) {
        if (d->kind == ast::DeclKind::Pou) {
            out.push_back(static_cast<const ast::PouDecl&>(*d).name.name);
        }
    }
    return out;
}

std::size_t countCode(const testing::Parsed& p, DiagCode code) {
    std::size_t n = 0;
    for (const Diagnostic& d : p.diags.diagnostics()) {
        n += d.code == code ? 1 : 0;
    }
    return n;
}

TEST(ParserRecovery, ThreeIndependentErrorsAreAllReportedAndLaterPousSurvive) {
    auto p = parseText("PROGRAM A\n"                   // 1
                       "VAR x : INT; END_VAR\n"        // 2
                       "x := 1\n"                      // 3: missing ';'
                       "x := 2;\n"                     // 4
                       "IF x > THEN x := 3; END_IF;\n" // 5: missing operand
                       "END_PROGRAM\n"                 // 6
                       "FUNCTION_BLOCK B\n"            // 7
                       "VAR y : INT END_VAR\n"         // 8: missing ';'
                       "y := y + 1;\n"                 // 9
                       "END_FUNCTION_BLOCK\n"          // 10
                       "FUNCTION C : INT\n"            // 11
                       "C := 1;\n"                     // 12
                       "END_FUNCTION\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"3:7 E0010", "5:8 E0010", "8:13 E0010"})) << p->messages();
    EXPECT_EQ(declNames(p->unit), (std::vector<std::string>{"A", "B", "C"}));
    std::string messages = p->messages();
    EXPECT_NE(messages.find("expected ';' after the assignment but found 'x'"), std::string::npos) << messages;
    EXPECT_NE(messages.find("expected an expression but found 'THEN'"), std::string::npos) << messages;
    EXPECT_NE(messages.find("found 'END_VAR'"), std::string::npos) << messages;
    // The statements around the errors are still in the tree.
    const auto& a = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    ASSERT_EQ(a.body.size(), 3u);
    EXPECT_EQ(a.body[2]->kind, ast::StmtKind::If);
    const auto& b = static_cast<const ast::PouDecl&>(*p->unit.decls[1]);
    EXPECT_EQ(b.body.size(), 1u);
}

TEST(ParserRecovery, MissingEndKeywordsAreE0012AtTheTokenFound) {
    auto p = parseText("PROGRAM A\n"
                       "IF x THEN\n"
                       "  y := 1;\n"
                       "END_PROGRAM\n"
                       "FUNCTION F : INT\n"
                       "WHILE TRUE DO\n"
                       "END_FUNCTION\n"
                       "FUNCTION_BLOCK G\n"
                       "VAR v : INT;\n"
                       "v := 1;\n"
                       "END_FUNCTION_BLOCK\n"
                       "PROGRAM H\n"
                       "x := 1;\n"
                       "PROGRAM I\n"
                       "END_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"4:1 E0012", "7:1 E0012", "10:1 E0012", "14:1 E0012"}))
        << p->messages();
    EXPECT_EQ(declNames(p->unit), (std::vector<std::string>{"A", "F", "G", "H", "I"}));
    EXPECT_NE(p->messages().find("missing END_IF for IF opened at line 2; found 'END_PROGRAM'"), std::string::npos)
        << p->messages();
    EXPECT_NE(p->messages().find("missing END_PROGRAM for PROGRAM 'H'"), std::string::npos) << p->messages();
    // The related location points at the opening keyword.
    ASSERT_FALSE(p->diags.diagnostics().empty());
    ASSERT_EQ(p->diags.diagnostics()[0].related.size(), 1u);
    EXPECT_EQ(p->sm.lineCol(p->diags.diagnostics()[0].related[0].span).line, 2u);
}

TEST(ParserRecovery, StrayTokensAreReportedAndSkipped) {
    auto p = parseText("PROGRAM A\n"
                       "x := 1;\n"
                       "END_IF;\n"
                       "y := ) 2;\n"
                       "z := 3;\n"
                       "END_PROGRAM\n"
                       "garbage here;\n"
                       "PROGRAM B END_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"3:1 E0011", "4:6 E0010", "7:1 E0011"})) << p->messages();
    EXPECT_EQ(declNames(p->unit), (std::vector<std::string>{"A", "B"}));
    const auto& a = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    ASSERT_EQ(a.body.size(), 3u); // x := 1; y := <error>; z := 3;
    EXPECT_EQ(a.body[2]->kind, ast::StmtKind::Assign);
}

TEST(ParserRecovery, ErrorsInsideDeclarationsResynchronise) {
    auto p = parseText("PROGRAM A\n"
                       "VAR\n"
                       "  a : ;\n"
                       "  b : INT := ;\n"
                       "  c INT;\n"
                       "  d : INT;\n"
                       "END_VAR\n"
                       "END_PROGRAM\n"
                       "TYPE E : (X, Y; END_TYPE\n"
                       "PROGRAM B END_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"3:7 E0010", "4:14 E0010", "5:3 E0011", "9:15 E0010"}))
        << p->messages();
    EXPECT_EQ(declNames(p->unit), (std::vector<std::string>{"A", "B"}));
    const auto& a = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    ASSERT_EQ(a.varBlocks.size(), 1u);
    ASSERT_FALSE(a.varBlocks[0].vars.empty());
    EXPECT_EQ(a.varBlocks[0].vars.back().names[0].name, "d");
}

TEST(ParserRecovery, NoSyntaxErrorPilesOnALexicalError) {
    // The unterminated string swallows the ';': only E0003 is reported, not a missing ';' too.
    auto p = parseText("PROGRAM P\n    path := 'C:\\logs$';\n    count := count + 1;\nEND_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"2:13 E0003"})) << p->messages();
    EXPECT_EQ(static_cast<const ast::PouDecl&>(*p->unit.decls[0]).body.size(), 2u);
}

TEST(ParserRecovery, AValueAfterAnUnknownTypePrefixIsE0008) {
    auto p = parseText("PROGRAM P\n    count := INTEGER#5;\n    x := Foo#-1.5 + 1;\n    m := Mode#Run;\nEND_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"2:14 E0008", "3:10 E0008"})) << p->messages();
    EXPECT_NE(p->messages().find("'INTEGER' in 'INTEGER#5' names no elementary type"), std::string::npos)
        << p->messages();
}

std::string repeat(std::string_view s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) {
        out += s;
    }
    return out;
}

constexpr std::size_t kDeep = 10000;

// Every deep construct gives exactly one E0013, the file after it still parses, and nothing
// overflows the stack (this also runs under the ASan build).
void expectOneNestingError(const std::string& program) {
    auto p = parseText(program + "\nPROGRAM After END_PROGRAM\n");
    EXPECT_EQ(countCode(*p, DiagCode::NestingTooDeep), 1u) << p->messages().substr(0, 2000);
    std::vector<std::string> names = declNames(p->unit);
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.back(), "After") << p->messages().substr(0, 2000);
    (void)p->dump(); // the dump walks the tree recursively: it must be shallow enough
}

TEST(ParserNesting, DeepParentheses) {
    expectOneNestingError("PROGRAM P x := " + repeat("(", kDeep) + "1" + repeat(")", kDeep) + "; END_PROGRAM");
}

TEST(ParserNesting, DeepIfs) {
    expectOneNestingError("PROGRAM P\n" + repeat("IF a THEN\n", kDeep) + "x := 1;\n" + repeat("END_IF;\n", kDeep) +
                          "END_PROGRAM");
}

TEST(ParserNesting, DeepLoopsOfMixedKinds) {
    expectOneNestingError("PROGRAM P\n" + repeat("WHILE a DO FOR i := 1 TO 2 DO REPEAT CASE x OF 1: ", kDeep / 4) +
                          "x := 1;" + repeat(" END_CASE; UNTIL b END_REPEAT; END_FOR; END_WHILE;", kDeep / 4) +
                          "\nEND_PROGRAM");
}

TEST(ParserNesting, DeepUnaryCallsAndIndices) {
    expectOneNestingError("PROGRAM P x := " + repeat("NOT ", kDeep) + "a; END_PROGRAM");
    expectOneNestingError("PROGRAM P x := " + repeat("-", kDeep) + "a; END_PROGRAM");
    expectOneNestingError("PROGRAM P x := " + repeat("f(", kDeep) + "1" + repeat(")", kDeep) + "; END_PROGRAM");
    expectOneNestingError("PROGRAM P x := " + repeat("a[", kDeep) + "1" + repeat("]", kDeep) + "; END_PROGRAM");
}

TEST(ParserNesting, LongChainsAreBoundedToo) {
    expectOneNestingError("PROGRAM P x := 1" + repeat(" + 1", 100000) + "; END_PROGRAM");
    expectOneNestingError("PROGRAM P x := a" + repeat(".b", kDeep) + "; END_PROGRAM");
    expectOneNestingError("PROGRAM P x := a" + repeat(" ** 2", kDeep) + "; END_PROGRAM");
}

TEST(ParserNesting, DeepInitialisersTypesAndNamespaces) {
    expectOneNestingError("PROGRAM P VAR a : ARRAY [0..1] OF INT := " + repeat("[", kDeep) + "1" + repeat("]", kDeep) +
                          "; END_VAR END_PROGRAM");
    expectOneNestingError("PROGRAM P VAR s : S := " + repeat("(a := ", kDeep) + "1" + repeat(")", kDeep) +
                          "; END_VAR END_PROGRAM");
    expectOneNestingError("TYPE R : " + repeat("REF_TO ", kDeep) + "INT; END_TYPE");
    expectOneNestingError("TYPE R : " + repeat("ARRAY [1..2] OF ", kDeep) + "INT; END_TYPE");
    expectOneNestingError(repeat("NAMESPACE N ", kDeep) + repeat("END_NAMESPACE ", kDeep));
}

TEST(ParserNesting, JustBelowTheLimitIsFine) {
    std::size_t depth = kMaxNesting - 8;
    auto p = parseText("PROGRAM P x := " + repeat("(", depth) + "1" + repeat(")", depth) + ";\n" +
                       repeat("IF a THEN ", depth) + repeat("END_IF; ", depth) + "END_PROGRAM");
    EXPECT_TRUE(p->diags.diagnostics().empty()) << p->messages();
}

// Mutated programs and random bytes: the parser returns (no crash, no hang) whatever it gets.
TEST(ParserRobustness, MutatedAndRandomInputs) {
    const std::string seed = "TYPE M : (A, B := 2); S : STRUCT x : INT := 1; END_STRUCT END_TYPE\n"
                             "FUNCTION_BLOCK F EXTENDS G VAR_INPUT i : INT; END_VAR METHOD m : BOOL m := TRUE; "
                             "END_METHOD\n"
                             "IF i > 0 THEN q := f(a := 1, b => c); ELSIF x THEN ; ELSE y := [1, 2(0)]; END_IF\n"
                             "CASE i OF 1..2, M#A: x := 1; ELSE x := 2; END_CASE FOR i := 0 TO 9 BY 2 DO EXIT; "
                             "END_FOR\n"
                             "WHILE a DO REPEAT b := b.%X3 OR c.1; UNTIL d END_REPEAT; END_WHILE\n"
                             "END_FUNCTION_BLOCK\n"
                             "CONFIGURATION C RESOURCE R ON P TASK t(INTERVAL := T#1s); PROGRAM p WITH t : Main; "
                             "END_RESOURCE END_CONFIGURATION\n"
                             "NAMESPACE N USING X; VAR_GLOBAL g AT %IX0.0 : BOOL; END_VAR END_NAMESPACE\n";
    std::mt19937 rng(12345);
    for (int round = 0; round < 400; ++round) {
        std::string text = seed;
        int edits = 1 + static_cast<int>(rng() % 8);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            std::size_t at = rng() % text.size();
            std::size_t len = 1 + rng() % 12;
            switch (rng() % 3) {
            case 0: text.erase(at, len); break;
            case 1: text.insert(at, text.substr(rng() % text.size(), len)); break;
            default: text[at] = static_cast<char>(rng() % 256); break;
            }
        }
        auto p = parseText(text);
        (void)p->dump();
    }
    for (int round = 0; round < 100; ++round) {
        std::string text(rng() % 400, '\0');
        for (char& c : text) {
            c = static_cast<char>(rng() % 256);
        }
        auto p = parseText(text);
        (void)p->dump();
    }
}

TEST(ParserRobustness, EmptyTokenStreamGivesAnEmptyUnit) {
    SourceManager sm;
    FileId id = sm.add("empty.st", "PROGRAM p END_PROGRAM");
    DiagnosticSink diags;
    ast::CompilationUnit unit = parse(sm.file(id), LexResult{}, diags);
    EXPECT_TRUE(unit.decls.empty());
    EXPECT_EQ(unit.file, id);
}

std::vector<std::filesystem::path> benchPrograms() {
    std::vector<std::filesystem::path> out;
    const std::string ours = std::string(TAKT_SOURCE_DIR) + "/bench/programs";
    for (const std::string& dir : {ours, std::string("/work/shared/bench-programs")}) {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            if (entry.path().extension() == ".st") {
                out.push_back(entry.path());
            }
        }
        if (!out.empty()) {
            break;
        }
    }
    return out;
}

TEST(ParserPrograms, BenchmarkProgramsParseWithoutDiagnostics) {
    std::vector<std::filesystem::path> files = benchPrograms();
    if (files.empty()) {
        GTEST_SKIP() << "no benchmark programs found";
    }
    for (const auto& path : files) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        auto p = parseText(ss.str());
        EXPECT_TRUE(p->diags.diagnostics().empty()) << path << "\n" << p->messages();
        EXPECT_FALSE(p->unit.decls.empty()) << path;
    }
}

} // namespace
} // namespace takt::compiler
