// Dialect openplc: what matiec (the OpenPLC compiler) accepts and CODESYS refuses. Each use is a
// warning of its own code; the same source under the default dialect (and iec) stays an error.
#include <string>

#include <gtest/gtest.h>

#include "takt/compiler/lexer.h"
#include "takt/compiler/project.h"

namespace takt::compiler {
namespace {

std::string codes(const std::string& text, Dialect dialect, std::size_t* errors = nullptr) {
    BuildOptions build;
    build.dialect = dialect;
    Project p = checkSources({{"main.st", text}}, build);
    std::string out;
    for (const Diagnostic& d : p.diagnostics) {
        const LineCol lc = p.sources->lineCol(d.span);
        out += (out.empty() ? "" : " ") + std::string(diagInfo(d.code).code) + "@" + std::to_string(lc.line) + ":" +
               std::to_string(lc.column) + "(" + std::string(severityName(d.severity)) + ")";
    }
    if (errors != nullptr) {
        *errors = p.errorCount;
    }
    return out;
}

TEST(DialectOpenplc, ReadFromBuildTableAndListedInTheError) {
    BuildOptions opts;
    EXPECT_TRUE(readBuildOptions("[build]\ndialect = \"openplc\"\n", "runtime.toml", opts).empty());
    EXPECT_EQ(opts.dialect, Dialect::Openplc);
    auto errors = readBuildOptions("[build]\ndialect = \"matiec\"\n", "runtime.toml", opts);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(renderConfigError(errors[0]), "runtime.toml:2:11: error: build.dialect: unknown value \"matiec\" "
                                            "(expected \"codesys\", \"iec\" or \"openplc\")");
}

const char* const kWritePrivate = R"(FUNCTION_BLOCK Acc
VAR
    sum : INT;
END_VAR
VAR_IN_OUT
    link : INT;
END_VAR
    sum := sum + 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    a : Acc;
    x : INT;
END_VAR
    a.sum := 5;
    a(link := x);
END_PROGRAM
)";

TEST(DialectOpenplc, W1019WritingAnFbVarFromOutside) {
    std::size_t errors = 0;
    // Naming the member from outside is W1002 as for a read, in every dialect.
    EXPECT_EQ(codes(kWritePrivate, Dialect::Openplc, &errors), "W1019@15:5(warning) W1002@15:7(warning)");
    EXPECT_EQ(errors, 0u);
    // The default dialect and iec keep refusing it.
    EXPECT_EQ(codes(kWritePrivate, Dialect::Codesys, &errors), "E0403@15:5(error) W1002@15:7(warning)");
    EXPECT_EQ(codes(kWritePrivate, Dialect::Iec, &errors), "E0403@15:5(error) W1002@15:7(error)");
}

TEST(DialectOpenplc, VarInOutAndVarTempStayUnwritableFromOutside) {
    // matiec refuses a VAR_IN_OUT member from outside too; only VAR is the leniency.
    std::string text = kWritePrivate;
    text.replace(text.find("a.sum := 5;"), 11, "a.link := 5;");
    std::size_t errors = 0;
    EXPECT_EQ(codes(text, Dialect::Openplc, &errors), "E0403@15:5(error) W1002@15:7(warning)");
}

const char* const kFlatComment = R"(PROGRAM Main
VAR
    x : INT;
END_VAR
    (* old: (* x := 2; *)
    x := 1;
END_PROGRAM
)";

TEST(DialectOpenplc, W1018CommentsCloseFlat) {
    std::size_t errors = 0;
    EXPECT_EQ(codes(kFlatComment, Dialect::Openplc, &errors), "W1018@5:13(warning)");
    EXPECT_EQ(errors, 0u);
    // Nested by default: the comment swallows the rest of the file.
    EXPECT_NE(codes(kFlatComment, Dialect::Codesys, &errors).find("E0002@5:5(error)"), std::string::npos);
    EXPECT_GT(errors, 0u);
}

TEST(DialectOpenplc, FlatSlashStarCommentsAndNoWarningWithoutAnInnerOpener) {
    SourceManager sm;
    const FileId id = sm.add("a.st", "/* a /* b */ x (* plain *) y");
    DiagnosticSink diags;
    const LexResult r = lex(sm.file(id), diags, Dialect::Openplc);
    ASSERT_EQ(diags.diagnostics().size(), 1u);
    EXPECT_EQ(diags.diagnostics()[0].code, DiagCode::FlatComment);
    ASSERT_EQ(r.tokens.size(), 3u); // x y EOF
    EXPECT_EQ(r.trivia.size(), 2u);
    DiagnosticSink nested;
    const LexResult d = lex(sm.file(id), nested);
    EXPECT_EQ(nested.errorCount(), 1u); // unterminated: the /* nests
    EXPECT_EQ(d.tokens.size(), 1u);
}

} // namespace
} // namespace takt::compiler
