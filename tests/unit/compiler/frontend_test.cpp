// compiler::Frontend: it loads a project as checkProject does (trust-lsp.toml libraries, include
// paths and vendor profile included), and after an edit it re-checks the edited file against the
// kept declarations of the others without parsing them again, falling back to a full check where
// the answer could differ. Each answer is compared with checkProject over the same texts on disk.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/compiler/frontend.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr const char* kFuncs = "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := INT_TO_REAL(x);\n"
                               "END_FUNCTION\n";
constexpr const char* kBase = "FUNCTION_BLOCK FB_Base\nVAR_INPUT\n    en : BOOL;\nEND_VAR\nVAR_OUTPUT\n    q : INT;\n"
                              "END_VAR\nIF en THEN\n    q := q + 1;\nEND_IF;\nEND_FUNCTION_BLOCK\n";
constexpr const char* kMain = "PROGRAM Main\nVAR\n    b : FB_Base;\n    r : REAL;\nEND_VAR\nb(en := TRUE);\n"
                              "r := Scale(b.q);\nEND_PROGRAM\n";

// "path:line:col code message" of the diagnostics of `file` (every file when empty).
std::vector<std::string> linesOf(const Project& p, const std::string& file = {}) {
    std::vector<std::string> out;
    for (const Diagnostic& d : p.diagnostics) {
        const SourceFile& f = p.sources->file(d.span.file);
        if (!file.empty() && f.path() != file) {
            continue;
        }
        const LineCol at = f.lineCol(d.span.begin);
        out.push_back(f.path() + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + " " +
                      std::string(diagInfo(d.code).code) + " " + d.message);
    }
    std::sort(out.begin(), out.end());
    return out;
}

class FrontendTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir.write("runtime.toml", "[build]\noverflow = \"wrap\"\n");
        dir.write("src/funcs.st", kFuncs);
        dir.write("src/base.st", kBase);
        dir.write("src/main.st", kMain);
    }
    fs::path path(const std::string& rel) const { return dir.path() / rel; }

    // Puts `text` in the editor and on disk, and compares the Frontend's answer for the file with
    // checkProject's over the disk.
    const CheckedProject& edit(Frontend& f, const std::string& rel, const std::string& text) {
        dir.write(rel, text);
        f.setText(path(rel), text);
        const CheckedProject& a = f.checkFile(path(rel));
        const Project full = checkProject({dir.path(), {}, false, {}, {}});
        EXPECT_EQ(linesOf(a.project, a.focus.empty() ? "" : rel), linesOf(full, a.focus.empty() ? "" : rel))
            << "after an edit of " << rel;
        return a;
    }

    TempDir dir;
};

TEST_F(FrontendTest, CheckIsWhatCheckProjectReports) {
    dir.write("src/main.st", std::string(kMain) + "FUNCTION Bad : INT\nBad := nothing;\nEND_FUNCTION\n");
    Frontend f({dir.path(), {}, false, {}, {}});
    const CheckedProject& a = f.check();
    const Project full = checkProject({dir.path(), {}, false, {}, {}});
    EXPECT_FALSE(linesOf(full).empty());
    EXPECT_EQ(linesOf(a.project), linesOf(full));
    EXPECT_EQ(a.project.sourcePaths, full.sourcePaths);
    ASSERT_EQ(a.files.size(), 3U);
    EXPECT_EQ(a.files[2], path("src/main.st"));
    EXPECT_EQ(f.stats().parses, 3U);
}

TEST_F(FrontendTest, BodyEditDoesNotParseOtherFilesAgain) {
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    std::string text = kMain;
    text.insert(text.find("END_PROGRAM"), "r := Scale(2);\n");
    const CheckedProject& first = edit(f, "src/main.st", text);
    EXPECT_EQ(first.focus, path("src/main.st"));
    EXPECT_EQ(f.stats().incrementalChecks, 1U);
    EXPECT_EQ(f.stats().fullChecks, 1U);
    // The first edit parses the edited file, finds the names it looked up in the others, and
    // parses it again with their declarations (once each).
    const std::size_t parses = f.stats().parses;
    EXPECT_EQ(parses, 3U + 1U + 3U);
    for (int i = 0; i < 5; ++i) {
        text.insert(text.find("END_PROGRAM"), "unknown" + std::to_string(i) + " := 1;\n");
        const CheckedProject& a = edit(f, "src/main.st", text);
        EXPECT_EQ(a.focus, path("src/main.st"));
        EXPECT_EQ(linesOf(a.project).size(), static_cast<std::size_t>(i + 1)) << "one E0104 per unknown name";
    }
    EXPECT_EQ(f.stats().incrementalChecks, 6U);
    EXPECT_EQ(f.stats().parses, parses + 5) << "only the edited file was parsed again";
    EXPECT_EQ(f.stats().fullChecks, 1U);
}

TEST_F(FrontendTest, DeclarationEditRechecksDependents) {
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    // Scale now takes a BOOL: main.st, which calls it with an INT, gets an error.
    std::string funcs = kFuncs;
    funcs.replace(funcs.find("x : INT"), 7, "x : BOOL");
    funcs.replace(funcs.find("INT_TO_REAL(x)"), 14, "1.0");
    const CheckedProject& a = edit(f, "src/funcs.st", funcs);
    EXPECT_TRUE(a.focus.empty()) << "a change other files see is a full check";
    EXPECT_EQ(f.stats().fullChecks, 2U);
    EXPECT_FALSE(linesOf(a.project, "src/main.st").empty());
    // And back: the error in main.st is gone.
    const CheckedProject& b = edit(f, "src/funcs.st", kFuncs);
    EXPECT_TRUE(b.focus.empty());
    EXPECT_TRUE(linesOf(b.project).empty());
}

TEST_F(FrontendTest, CrossFileDiagnosticsAppearAndDisappear) {
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    // base.st's body calls a FUNCTION that calls back through main.st's: E0115 in both files.
    dir.write("src/main.st", std::string(kMain) + "FUNCTION Back : INT\nBack := 1;\nEND_FUNCTION\n");
    f.invalidate();
    (void)f.check();
    std::string funcs = std::string(kFuncs) + "FUNCTION Fwd : INT\nFwd := 0;\nEND_FUNCTION\n";
    (void)edit(f, "src/funcs.st", funcs); // a new FUNCTION: declarations changed, full check
    std::string main = std::string(kMain) + "FUNCTION Back : INT\nBack := Fwd();\nEND_FUNCTION\n";
    const CheckedProject& calls = edit(f, "src/main.st", main);
    EXPECT_FALSE(calls.focus.empty()) << "a call with no cycle is answered by the file alone";
    std::string cycle = funcs;
    cycle.replace(cycle.find("Fwd := 0;"), 9, "Fwd := Back();");
    const CheckedProject& closed = edit(f, "src/funcs.st", cycle);
    EXPECT_TRUE(closed.focus.empty()) << "the cycle runs through another file's body";
    std::vector<std::string> all = linesOf(closed.project);
    EXPECT_EQ(std::count_if(all.begin(), all.end(),
                            [](const std::string& l) { return l.find("E0115") != std::string::npos; }),
              2);
    const CheckedProject& open = edit(f, "src/funcs.st", funcs);
    EXPECT_TRUE(open.focus.empty());
    EXPECT_TRUE(linesOf(open.project).empty()) << "E0115 left both files";
}

TEST_F(FrontendTest, LocalNamedFromAnotherFileGetsAFullCheck) {
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    // A PROGRAM's locals can be named from outside it: main.st names one of Helper's program.
    dir.write("src/funcs.st", std::string(kFuncs) + "PROGRAM Helper\nVAR\n    spare : INT;\nEND_VAR\nEND_PROGRAM\n");
    f.invalidate();
    (void)f.check();
    std::string main = kMain;
    main.insert(main.find("END_PROGRAM"), "Helper.spare := 1;\n");
    (void)edit(f, "src/main.st", main); // W0001 for spare leaves funcs.st
    std::string funcs =
        std::string(kFuncs) + "PROGRAM Helper\nVAR\n    spare : INT;\nEND_VAR\nspare := 2;\nEND_PROGRAM\n";
    const CheckedProject& a = edit(f, "src/funcs.st", funcs);
    EXPECT_TRUE(a.focus.empty()) << "W0001 of spare depends on main.st's body";
}

// The files an edit is checked with are those whose declarations semantic analysis looked names
// up in: an edit of a body that starts naming another file's function, a global whose type lies in
// a third file, or an enumeration value, is answered by the file alone, as checkProject answers it.
TEST_F(FrontendTest, AnEditThatStartsNamingOtherFilesIsCheckedWithThem) {
    dir.write("src/types.st", "TYPE E_Mode : (Idle, Run, Fault);\nEND_TYPE\n\nTYPE ST_Pair :\nSTRUCT\n    a : INT;\n"
                              "    b : BOOL;\nEND_STRUCT\nEND_TYPE\n");
    dir.write("src/globals.st", "VAR_GLOBAL\n    gPair : ST_Pair;\n    gMode : E_Mode;\nEND_VAR\n");
    dir.write("src/util.st", "FUNCTION Twice : INT\nVAR_INPUT\n    v : INT;\nEND_VAR\nTwice := v * 2;\nEND_FUNCTION\n");
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    std::string text = kMain;
    text.insert(text.find("END_PROGRAM"), "r := Scale(3);\n");
    EXPECT_FALSE(edit(f, "src/main.st", text).focus.empty()); // checked with funcs.st and base.st
    // util.st: a function main.st never named.
    text.insert(text.find("END_PROGRAM"), "r := Scale(Twice(TRUE));\n");
    const CheckedProject& twice = edit(f, "src/main.st", text);
    EXPECT_FALSE(twice.focus.empty());
    ASSERT_EQ(linesOf(twice.project).size(), 1U) << "BOOL into Twice's INT input";
    // globals.st, and through gPair's type, types.st.
    text.insert(text.find("END_PROGRAM"), "gPair.b := 5;\ngMode := Fault;\ngMode := 7;\n");
    const CheckedProject& globals = edit(f, "src/main.st", text);
    EXPECT_FALSE(globals.focus.empty());
    EXPECT_EQ(linesOf(globals.project).size(), 3U);
    EXPECT_EQ(f.stats().fullChecks, 1U);
}

// A name the edited file declares that another file declares too is an error the edited file
// keeps after a body edit, although nothing in it names the other file.
TEST_F(FrontendTest, ABodyEditKeepsADuplicateDeclaredElsewhere) {
    dir.write("src/util.st", "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := 1.0;\nEND_FUNCTION\n");
    dir.write("src/zz.st", "FUNCTION Other : INT\nOther := 1;\nEND_FUNCTION\n");
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    // zz.st's only name is declared by no one else; a body edit of it is checked alone.
    const CheckedProject& alone = edit(f, "src/zz.st", "FUNCTION Other : INT\nOther := 2;\nEND_FUNCTION\n");
    EXPECT_FALSE(alone.focus.empty());
    // util.st's Scale is a duplicate of funcs.st's (E0101 lands on the later file, util.st).
    const CheckedProject& dup = edit(
        f, "src/util.st", "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := 2.0;\nEND_FUNCTION\n");
    EXPECT_FALSE(dup.focus.empty());
    EXPECT_EQ(linesOf(dup.project, "src/util.st").size(), 1U);
    // zz.st adds a third Scale, naming nothing: its E0101 needs funcs.st's declaration all the same.
    const CheckedProject& third = edit(f, "src/zz.st",
                                       "FUNCTION Other : INT\nOther := 2;\nEND_FUNCTION\n\nFUNCTION Scale : REAL\n"
                                       "Scale := 3.0;\nEND_FUNCTION\n");
    EXPECT_FALSE(third.focus.empty()) << "a duplicate declares nothing the other files see";
    EXPECT_EQ(linesOf(third.project, "src/zz.st").size(), 1U);
}

// Renaming a declaration changes what the file declares for the others: a full check, after
// which the file that used the old name reports it.
TEST_F(FrontendTest, RenamingADeclarationIsAFullCheck) {
    Frontend f({dir.path(), {}, false, {}, {}});
    (void)f.check();
    std::string base = kBase;
    base.replace(base.find("FB_Base"), 7, "FB_Bass");
    const CheckedProject& a = edit(f, "src/base.st", base);
    EXPECT_TRUE(a.focus.empty());
    EXPECT_EQ(f.stats().fullChecks, 2U);
    EXPECT_FALSE(linesOf(a.project, "src/main.st").empty());
    // A change of a local's spelling only (FB_Base's `en` as `En`) is one too: messages quote it.
    std::string respelled = kBase;
    respelled.replace(respelled.find("en : BOOL"), 2, "En");
    (void)edit(f, "src/base.st", respelled);
    EXPECT_EQ(f.stats().fullChecks, 3U);
}

// The bug an outside check found: the editor's loader did not read trust-lsp.toml.
TEST(FrontendTrust, LibrariesIncludePathsAndVendorProfileAsCheckProject) {
    TempDir dir;
    dir.write("lib/trust-lsp.toml", "[package]\nname = \"Motion\"\n\n[project]\ninclude_paths = [\"st\"]\n");
    dir.write("lib/st/axis.st", "FUNCTION_BLOCK FB_Axis\nVAR_INPUT\n    en : BOOL;\nEND_VAR\nEND_FUNCTION_BLOCK\n");
    dir.write("app/trust-lsp.toml", "[project]\ninclude_paths = [\"sources\"]\nvendor_profile = \"mitsubishi\"\n\n"
                                    "[dependencies]\nMotion = { path = \"../lib\" }\n");
    const std::string main = "PROGRAM Main\nVAR\n    a : FB_Axis;\n    e : DIFU;\n    x : BOOL;\nEND_VAR\na(en := x);\n"
                             "e(x);\nEND_PROGRAM\n";
    dir.write("app/sources/main.st", main);
    const fs::path app = dir.path() / "app";
    EXPECT_EQ(projectRootFor(app / "sources/main.st", dir.path()), app);
    Frontend f({app, {}, false, {}, {}});
    f.setText(app / "sources/main.st", main);
    const CheckedProject& a = f.check();
    const Project full = checkProject({app, {}, false, {}, {}});
    EXPECT_EQ(linesOf(a.project), linesOf(full));
    for (const std::string& l : linesOf(a.project)) {
        EXPECT_EQ(l.find("E0102"), std::string::npos) << l;
    }
    ASSERT_TRUE(a.fileOf(app / "trust-lsp.toml").has_value());
    ASSERT_TRUE(a.fileOf(dir.path() / "lib/st/axis.st").has_value());
    // A body edit of the project's file is answered against the library's kept declarations.
    const std::string edited = main.substr(0, main.find("END_PROGRAM")) + "a(en := NOT x);\nEND_PROGRAM\n";
    f.setText(app / "sources/main.st", edited);
    const CheckedProject& b = f.checkFile(app / "sources/main.st");
    EXPECT_EQ(b.focus, app / "sources/main.st");
    dir.write("app/sources/main.st", edited);
    EXPECT_EQ(linesOf(b.project, "sources/main.st"),
              linesOf(checkProject({app, {}, false, {}, {}}), "sources/main.st"));
}

} // namespace
} // namespace takt::compiler
