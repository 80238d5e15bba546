// The formatter: golden files (tests/fmt/*.input.st -> *.expected.st), idempotency and
// comment preservation over every .st file in the repository, and refusal of broken files.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formatter_rules.h"
#include "support/paths.h"
#include "takt/compiler/ast_dump.h"
#include "takt/compiler/formatter.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/sema.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

FormatResult format(const std::string& text, DiagnosticSink& diags) {
    SourceFile file(0, "test.st", text);
    return formatSource(file, diags);
}

std::string formatOk(const std::string& text) {
    SourceManager sm;
    FileId id = sm.add("test.st", text);
    DiagnosticSink diags;
    FormatResult r = formatSource(sm.file(id), diags);
    EXPECT_TRUE(r.ok) << renderHuman(diags.diagnostics(), sm) << "in:\n" << text;
    return r.text;
}

bool parsesCleanly(const std::string& text) {
    SourceFile file(0, "probe.st", text);
    DiagnosticSink diags;
    (void)parseSource(file, diags);
    return !diags.hasErrors();
}

// Every .st file the formatter must accept: the repository's tests and examples, and the
// shared benchmark programs when that folder exists on this machine.
std::vector<fs::path> corpusFiles() {
    std::vector<fs::path> files;
    std::vector<fs::path> roots = {fs::path(TAKT_SOURCE_DIR) / "tests", fs::path(TAKT_SOURCE_DIR) / "examples",
                                   fs::path("/work/shared/bench-programs")};
    for (const fs::path& root : roots) {
        std::error_code ec;
        if (!fs::is_directory(root, ec)) {
            continue;
        }
        for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
             it.increment(ec)) {
            // Files with syntax errors (the invalid corpus, fuzz reproducers) are refused by
            // design; every file that parses must format, idempotently.
            if (it->is_regular_file() && it->path().extension() == ".st" && parsesCleanly(readFile(it->path()))) {
                files.push_back(it->path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

bool lexesCleanly(const std::string& text) {
    SourceFile file(0, "probe.st", text);
    DiagnosticSink diags;
    (void)lex(file, diags);
    return !diags.hasErrors();
}

// Comment and pragma texts, normalised the way the formatter writes them back (LF line
// endings; a line comment loses trailing blanks, which are trailing whitespace of its line).
std::vector<std::string> commentTexts(const std::string& text) {
    SourceFile file(0, "probe.st", text);
    DiagnosticSink diags;
    LexResult lexed = lex(file, diags);
    std::vector<std::string> out;
    for (const Trivia& t : lexed.trivia) {
        std::string s(text.substr(t.begin, t.end - t.begin));
        s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
        if (t.kind == TriviaKind::LineComment) {
            s.erase(s.find_last_not_of(" \t") + 1);
        }
        out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(FormatterGolden, EveryInputFormatsToItsExpectedFile) {
    fs::path dir = fs::path(TAKT_SOURCE_DIR) / "tests" / "fmt";
    std::size_t pairs = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        const std::string suffix = ".input.st";
        if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
            continue;
        }
        fs::path expectedPath = dir / (name.substr(0, name.size() - suffix.size()) + ".expected.st");
        ASSERT_TRUE(fs::exists(expectedPath)) << expectedPath;
        std::string expected = readFile(expectedPath);
        std::string actual = formatOk(readFile(entry.path()));
        EXPECT_EQ(actual, expected) << "for " << name;
        // The expected file is canonical itself: formatting it changes nothing.
        DiagnosticSink diags;
        FormatResult again = format(expected, diags);
        EXPECT_TRUE(again.ok);
        EXPECT_FALSE(again.changed) << expectedPath;
        ++pairs;
    }
    EXPECT_GE(pairs, 10u);
}

TEST(FormatterCorpus, FormattingIsIdempotentOnEveryStFile) {
    std::size_t checked = 0;
    for (const fs::path& path : corpusFiles()) {
        std::string text = readFile(path);
        if (!lexesCleanly(text)) {
            continue; // deliberately broken inputs (lexer tests) are covered by the refusal tests
        }
        std::string once = formatOk(text);
        std::string twice = formatOk(once);
        EXPECT_EQ(once, twice) << path;
        ++checked;
    }
    EXPECT_GT(checked, 0u);
}

TEST(FormatterCorpus, EveryCommentIsKept) {
    for (const fs::path& path : corpusFiles()) {
        std::string text = readFile(path);
        if (!lexesCleanly(text)) {
            continue;
        }
        EXPECT_EQ(commentTexts(formatOk(text)), commentTexts(text)) << path;
    }
}

// The syntax tree (without positions) of a file, upper-cased: names are case-insensitive and
// the formatter upper-cases keywords and elementary type names, nothing else.
std::string treeOf(const std::string& text) {
    SourceManager sm;
    FileId id = sm.add("tree.st", text);
    DiagnosticSink diags;
    ast::CompilationUnit unit = parseSource(sm.file(id), diags);
    EXPECT_FALSE(diags.hasErrors()) << renderHuman(diags.diagnostics(), sm);
    std::string dump = dumpAst(unit, sm);
    for (char& c : dump) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return dump;
}

TEST(FormatterCorpus, FormattingNeverChangesTheSyntaxTree) {
    std::size_t checked = 0;
    for (const fs::path& path : corpusFiles()) {
        std::string text = readFile(path);
        if (!lexesCleanly(text)) {
            continue;
        }
        std::string before = treeOf(text);
        EXPECT_FALSE(before.empty()) << path;
        EXPECT_EQ(treeOf(formatOk(text)), before) << path;
        ++checked;
    }
    EXPECT_GT(checked, 0u);
}

// What semantic analysis makes of a file: its symbol listing plus the codes and messages of
// its diagnostics (positions move when a file is formatted; nothing else may change).
std::string meaningOf(const std::string& text) {
    SourceManager sm;
    FileId id = sm.add("meaning.st", text);
    DiagnosticSink diags;
    std::vector<ast::CompilationUnit> units;
    units.push_back(parseSource(sm.file(id), diags));
    AnalysisResult analysis = analyze(units, sm, diags);
    std::vector<std::string> lines;
    for (const Diagnostic& d : diags.diagnostics()) {
        lines.push_back(std::string(diagInfo(d.code).code) + " " + d.message);
    }
    std::sort(lines.begin(), lines.end());
    std::string out = dumpSymbols(*analysis.model);
    for (const std::string& line : lines) {
        out += "\n" + line;
    }
    // ST names are case-insensitive and the formatter upper-cases elementary type names even
    // where they are used as names (`Time := …`), so meaning is compared without case.
    return upperName(out);
}

TEST(FormatterCorpus, FormattingKeepsSymbolsAndDiagnostics) {
    std::size_t checked = 0;
    for (const fs::path& path : corpusFiles()) {
        std::string text = readFile(path);
        if (!lexesCleanly(text)) {
            continue;
        }
        std::string before = meaningOf(text);
        EXPECT_FALSE(before.empty()) << path;
        EXPECT_EQ(meaningOf(formatOk(text)), before) << path;
        ++checked;
    }
    EXPECT_GT(checked, 0u);
}

std::vector<fs::path> goldenInputs() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(fs::path(TAKT_SOURCE_DIR) / "tests" / "fmt")) {
        if (entry.path().string().find(".input.st") != std::string::npos) {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Comments and line breaks in every possible place: before each token of every golden input,
// insert a block comment, a line comment or a line break. Each variant must format to a fixed
// point with the same comments and the same syntax tree.
TEST(FormatterInjection, CommentsAndLineBreaksAnywhereAreStable) {
    const std::vector<std::string> inserts = {" (* c *) ",          " // c\n", "\n", "\n\n(* own *)\n",
                                              "(* two\n  lines *)", "{p}"};
    std::size_t variants = 0;
    for (const fs::path& path : goldenInputs()) {
        std::string text = readFile(path);
        SourceFile file(0, "in.st", text);
        DiagnosticSink diags;
        LexResult lexed = lex(file, diags);
        std::string tree = treeOf(text);
        for (const Token& tok : lexed.tokens) {
            for (const std::string& insert : inserts) {
                std::string variant = text.substr(0, tok.begin) + insert + text.substr(tok.begin);
                std::string once = formatOk(variant);
                ASSERT_EQ(formatOk(once), once) << path << " with '" << insert << "' at " << tok.begin;
                ASSERT_EQ(commentTexts(once), commentTexts(variant)) << path << " at " << tok.begin;
                ASSERT_EQ(treeOf(once), tree) << path << " at " << tok.begin;
                ++variants;
            }
        }
    }
    EXPECT_GT(variants, 1000u);
}

TEST(FormatterComments, AllPlacementsKeepTheirText) {
    std::string src = "(* a *) PROGRAM P // b\nVAR x : INT; (* c\n   d *) END_VAR\n{pragma}\n"
                      "x := /* e */ 1; // f\r\n(* g (* nested *) *)\nEND_PROGRAM // h";
    EXPECT_EQ(commentTexts(formatOk(src)), commentTexts(src));
}

TEST(FormatterComments, MultiLineBlockCommentInnerTextIsVerbatim) {
    std::string src = "PROGRAM P\nx := 1;\n      (* first\n  second   \n\tthird *)\nEND_PROGRAM\n";
    std::string out = formatOk(src);
    EXPECT_NE(out.find("    (* first\n  second   \n\tthird *)\n"), std::string::npos) << out;
}

TEST(FormatterLayout, SplitsStatementsAndDeclarationsOntoTheirOwnLines) {
    EXPECT_EQ(formatOk("PROGRAM P VAR a : INT; b : INT; END_VAR a := 1; b := 2; END_PROGRAM"),
              "PROGRAM P\n    VAR\n        a : INT;\n        b : INT;\n    END_VAR\n    a := 1;\n    b := 2;\n"
              "END_PROGRAM\n");
}

TEST(FormatterLayout, KeepsAtMostOneBlankLineAndEndsWithOneNewline) {
    EXPECT_EQ(formatOk("\n\n\nPROGRAM P\nx := 1;\n\n\n\n\ny := 2;   \nEND_PROGRAM\n\n\n"),
              "PROGRAM P\n    x := 1;\n\n    y := 2;\nEND_PROGRAM\n");
}

TEST(FormatterLayout, EmptyAndWhitespaceOnlyFilesStayEmpty) {
    EXPECT_EQ(formatOk(""), "");
    EXPECT_EQ(formatOk(" \r\n\t\n"), "");
}

TEST(FormatterLayout, CrLfBecomesLf) {
    std::string out = formatOk("PROGRAM P\r\nx := 1;\r\nEND_PROGRAM\r\n");
    EXPECT_EQ(out.find('\r'), std::string::npos);
    EXPECT_EQ(out, "PROGRAM P\n    x := 1;\nEND_PROGRAM\n");
}

TEST(FormatterLayout, StringsAndLiteralsAreNotChanged) {
    EXPECT_EQ(formatOk("PROGRAM P s := 'MiXeD  case $N'; w := \"wide  Text\"; n := 16#ff; r := 1.5e3; t := t#1H2m;"
                       " END_PROGRAM"),
              "PROGRAM P\n    s := 'MiXeD  case $N';\n    w := \"wide  Text\";\n    n := 16#ff;\n    r := 1.5e3;\n"
              "    t := T#1H2m;\nEND_PROGRAM\n");
}

TEST(FormatterLayout, IdentifiersKeepTheirSpellingButTypeNamesAreUpperCased) {
    EXPECT_EQ(formatOk("PROGRAM P VAR myVar : lreal := MyOther; END_VAR fieldX.date := sint#3; END_PROGRAM"),
              "PROGRAM P\n    VAR\n        myVar : LREAL := MyOther;\n    END_VAR\n    fieldX.DATE := SINT#3;\n"
              "END_PROGRAM\n");
}

// Removing the author's spaces must never merge tokens: `1 . 5` is not a REAL and `%IW1 . 2`
// is not one address.
TEST(FormatterLayout, NeverGluesTokensIntoDifferentOnes) {
    for (const std::string stmt : {"x := a[1 . 5];", "x := %IW1 . 2;", "x := T#1s . 5;"}) {
        std::string src = "PROGRAM P\n" + stmt + "\nEND_PROGRAM\n";
        std::string out = formatOk(src);
        SourceFile in(0, "a", src);
        SourceFile formatted(0, "b", out);
        DiagnosticSink d1;
        DiagnosticSink d2;
        EXPECT_EQ(lex(in, d1).tokens.size(), lex(formatted, d2).tokens.size()) << out;
        EXPECT_EQ(formatOk(out), out);
    }
}

// The glue check itself, on sequences the parser would reject but the lexer merges.
TEST(FormatterRules, GlueCheckRejectsSequencesThatLexDifferently) {
    using fmtrules::lexesAs;
    EXPECT_TRUE(lexesAs("a[1]", {1, 2, 3, 4}));
    EXPECT_TRUE(lexesAs("1..5", {1, 3, 4}));
    EXPECT_FALSE(lexesAs("(*", {1, 2}));     // opens a comment
    EXPECT_FALSE(lexesAs("//", {1, 2}));     // opens a line comment
    EXPECT_FALSE(lexesAs("/*", {1, 2}));     // opens a C comment
    EXPECT_FALSE(lexesAs("1.5", {1, 2, 3})); // one REAL
    EXPECT_FALSE(lexesAs("..", {1, 2}));     // one DotDot
    EXPECT_FALSE(lexesAs(":=", {1, 2}));     // one Assign
    EXPECT_FALSE(lexesAs("INT#", {3, 4}));   // one typed prefix
}

TEST(FormatterLayout, ChangedFlagReportsWhetherTheTextDiffers) {
    DiagnosticSink diags;
    EXPECT_FALSE(format("PROGRAM P\n    x := 1;\nEND_PROGRAM\n", diags).changed);
    EXPECT_TRUE(format("PROGRAM P\n    x:=1;\nEND_PROGRAM\n", diags).changed);
    EXPECT_FALSE(diags.hasErrors());
}

TEST(FormatterRefusal, SyntaxErrorsYieldDiagnosticsAndNoText) {
    for (const char* src : {"PROGRAM P\nx := ;\nEND_PROGRAM\n", "PROGRAM P\nIF x THEN\ny := 1;\nEND_PROGRAM\n",
                            "x := 1;\n", "FUNCTION_BLOCK Fb\nVAR\nx INT;\nEND_VAR\nEND_FUNCTION_BLOCK\n"}) {
        DiagnosticSink diags;
        FormatResult r = format(src, diags);
        EXPECT_FALSE(r.ok) << src;
        EXPECT_TRUE(r.text.empty());
        EXPECT_TRUE(diags.hasErrors()) << src;
    }
}

TEST(FormatterRefusal, RefusesEvenWhenTheCallersSinkIsFull) {
    DiagnosticSink full(1);
    (void)full.report(DiagCode::UnknownType, Span{7, 0, 1}, "unknown type 'X'");
    FormatResult r = format("PROGRAM P\nx := ;\nEND_PROGRAM\n", full);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.text.empty());
}

TEST(FormatterRefusal, LexicalErrorsYieldDiagnosticsAndNoText) {
    struct Case {
        const char* src;
        DiagCode code;
    };
    for (const Case& c : {Case{"x := 'open;\n", DiagCode::UnterminatedString},
                          Case{"(* never closed\nx := 1;", DiagCode::UnterminatedComment},
                          Case{"x := 1 ? 2;", DiagCode::InvalidCharacter}, Case{"x := 12ab;", DiagCode::InvalidNumber},
                          Case{"{pragma", DiagCode::UnterminatedPragma}}) {
        DiagnosticSink diags;
        FormatResult r = format(c.src, diags);
        EXPECT_FALSE(r.ok) << c.src;
        EXPECT_TRUE(r.text.empty());
        ASSERT_TRUE(diags.hasErrors()) << c.src;
        EXPECT_EQ(diags.diagnostics().front().code, c.code) << c.src;
    }
}

} // namespace
} // namespace takt::compiler
