#include "takt/compiler/lexer.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "takt/compiler/parser.h"

namespace takt::compiler {
namespace {

struct Lexed {
    SourceManager sm;
    DiagnosticSink diags;
    LexResult result;
    FileId file = kNoFile;

    [[nodiscard]] std::vector<TokenKind> kinds() const {
        std::vector<TokenKind> out;
        for (const Token& t : result.tokens) {
            out.push_back(t.kind);
        }
        return out;
    }
    [[nodiscard]] std::vector<std::string> texts() const {
        std::vector<std::string> out;
        for (const Token& t : result.tokens) {
            out.emplace_back(sm.file(file).text().substr(t.begin, t.end - t.begin));
        }
        return out;
    }
    [[nodiscard]] std::vector<std::string> codes() const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags.diagnostics()) {
            LineCol lc = sm.lineCol(d.span);
            out.push_back(fmt::format("{}:{} {}", lc.line, lc.column, diagInfo(d.code).code));
        }
        return out;
    }
};

std::unique_ptr<Lexed> lexText(std::string text) {
    auto l = std::make_unique<Lexed>();
    l->file = l->sm.add("lex.st", std::move(text));
    l->result = lex(l->sm.file(l->file), l->diags);
    return l;
}

using K = TokenKind;

TEST(Lexer, KeywordsOperatorsAndLiterals) {
    auto l = lexText("PROGRAM p x := 16#FF + 1.5E3 ** 2; a[1..5].b <> c <= d >= e => f & g END_PROGRAM");
    EXPECT_EQ(
        l->kinds(),
        (std::vector<K>{K::Program,     K::Identifier, K::Identifier, K::Assign,     K::IntLiteral,   K::Plus,
                        K::RealLiteral, K::Power,      K::IntLiteral, K::Semicolon,  K::Identifier,   K::LBracket,
                        K::IntLiteral,  K::DotDot,     K::IntLiteral, K::RBracket,   K::Dot,          K::Identifier,
                        K::NotEqual,    K::Identifier, K::LessEqual,  K::Identifier, K::GreaterEqual, K::Identifier,
                        K::Arrow,       K::Identifier, K::Ampersand,  K::Identifier, K::EndProgram,   K::EndOfFile}));
    EXPECT_TRUE(l->diags.diagnostics().empty());
}

TEST(Lexer, KeywordsAreCaseInsensitiveAndTypeNamesAreIdentifiers) {
    auto l = lexText("end_if End_If INT bool");
    EXPECT_EQ(l->kinds(), (std::vector<K>{K::EndIf, K::EndIf, K::Identifier, K::Identifier, K::EndOfFile}));
}

TEST(Lexer, TypedAndDateTimeLiterals) {
    auto l = lexText("INT#5 Mode#Run T#1h2m TIME#-5s LTIME#5ns D#2024-01-15 TOD#12:30:00.5 "
                     "DT#2024-01-15-12:30:00 'str' \"wide\" %IX1.2 %QW3 %I* w.%X3");
    EXPECT_EQ(l->kinds(), (std::vector<K>{K::TypedPrefix, K::IntLiteral, K::TypedPrefix, K::Identifier, K::TimeLiteral,
                                          K::TimeLiteral, K::TimeLiteral, K::DateLiteral, K::TodLiteral, K::DtLiteral,
                                          K::StringLiteral, K::WStringLiteral, K::DirectAddress, K::DirectAddress,
                                          K::DirectAddress, K::Identifier, K::Dot, K::DirectAddress, K::EndOfFile}));
    EXPECT_EQ(l->texts()[5], "TIME#-5s");
    EXPECT_EQ(l->texts()[9], "DT#2024-01-15-12:30:00");
    EXPECT_TRUE(l->diags.diagnostics().empty()) << renderHuman(l->diags.diagnostics(), l->sm);
}

TEST(Lexer, NestedCommentsAndPragmasAreTrivia) {
    auto l = lexText("a (* one (* two *) still *) b /* x /* y */ z */ c // line\n"
                     "{attribute 'hide'} d");
    EXPECT_EQ(l->kinds(), (std::vector<K>{K::Identifier, K::Identifier, K::Identifier, K::Identifier, K::EndOfFile}));
    ASSERT_EQ(l->result.trivia.size(), 4u);
    const std::string_view src = l->sm.file(l->file).text();
    auto triviaText = [&](std::size_t i) {
        const Trivia& t = l->result.trivia[i];
        return src.substr(t.begin, t.end - t.begin);
    };
    EXPECT_EQ(l->result.trivia[0].kind, TriviaKind::BlockComment);
    EXPECT_EQ(triviaText(0), "(* one (* two *) still *)");
    EXPECT_EQ(triviaText(1), "/* x /* y */ z */");
    EXPECT_EQ(l->result.trivia[2].kind, TriviaKind::LineComment);
    EXPECT_EQ(triviaText(2), "// line");
    EXPECT_EQ(l->result.trivia[3].kind, TriviaKind::Pragma);
    EXPECT_EQ(triviaText(3), "{attribute 'hide'}");
    EXPECT_TRUE(l->diags.diagnostics().empty());
}

TEST(Lexer, LineStartFlags) {
    auto l = lexText("a b\n  c (* x\n *) d");
    ASSERT_EQ(l->result.tokens.size(), 5u);
    EXPECT_TRUE(l->result.tokens[0].lineStart);
    EXPECT_FALSE(l->result.tokens[1].lineStart);
    EXPECT_TRUE(l->result.tokens[2].lineStart);
    EXPECT_FALSE(l->result.tokens[3].lineStart); // the newline is inside the comment
}

TEST(Lexer, InvalidCharacterE0001) {
    auto l = lexText("x := 1;\ny := 2 ? 3;");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"2:8 E0001"}));
    EXPECT_NE(l->diags.diagnostics()[0].message.find("'?'"), std::string::npos);
}

TEST(Lexer, UnterminatedCommentE0002) {
    auto l = lexText("x\n  (* open (* nested *) never closed");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"2:3 E0002"}));
}

TEST(Lexer, UnterminatedStringE0003) {
    auto l = lexText("a := 'abc\nb := 1;");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"1:6 E0003"}));
    // Lexing continues on the next line.
    EXPECT_EQ(l->kinds().back(), K::EndOfFile);
    EXPECT_EQ(l->texts()[l->texts().size() - 5], "b");
}

TEST(Lexer, InvalidNumberE0004) {
    auto l = lexText("a := 12abc;\nb := 16#;");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"1:6 E0004", "2:6 E0004"}));
    EXPECT_NE(l->diags.diagnostics()[0].message.find("12abc"), std::string::npos);
}

TEST(Lexer, InvalidTimeLiteralE0005) {
    auto l = lexText("a :=\n   T# ;");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"2:4 E0005"}));
}

TEST(Lexer, InvalidEscapeE0006IsFoundWhenTheLiteralIsDecoded) {
    // The lexer only delimits strings; the parser decodes them (literals.h) and reports E0006.
    SourceManager sm;
    FileId id = sm.add("esc.st", "PROGRAM p\n  s := 'ok$Zno';\nEND_PROGRAM\n");
    DiagnosticSink diags;
    (void)parseSource(sm.file(id), diags);
    ASSERT_EQ(diags.diagnostics().size(), 1u);
    EXPECT_EQ(diags.diagnostics()[0].code, DiagCode::InvalidEscape);
    LineCol lc = sm.lineCol(diags.diagnostics()[0].span);
    EXPECT_EQ(lc.line, 2u);
    EXPECT_EQ(lc.column, 8u);
    EXPECT_NE(diags.diagnostics()[0].message.find("$Z"), std::string::npos);
}

TEST(Lexer, UnterminatedPragmaE0007) {
    auto l = lexText("x\n\n y {attribute 'x'");
    EXPECT_EQ(l->codes(), (std::vector<std::string>{"3:4 E0007"}));
}

} // namespace
} // namespace takt::compiler
