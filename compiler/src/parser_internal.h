#pragma once
// The recursive-descent parser's state, shared by parser.cpp (tokens, errors, top level),
// parser_decls.cpp (POUs, variables, types, configurations), parser_stmts.cpp and
// parser_exprs.cpp. Recursion depth is counted per area so that no input can overflow the
// stack: beyond kMaxNesting the construct is skipped token by token (E0013).
#include <array>
#include <string>
#include <string_view>

#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/token.h"

namespace takt::compiler {

struct SfcChart; // sfc.h

class Parser {
public:
    Parser(const SourceFile& file, const LexResult& lexed, DiagnosticSink& diags);

    ast::CompilationUnit parseUnit();

    // --- tokens (parser.cpp) ------------------------------------------------------------------
    [[nodiscard]] const Token& tok() const { return tokens_[pos_]; }
    [[nodiscard]] const Token& peekTok(std::size_t ahead) const {
        std::size_t i = pos_ + ahead;
        return i < tokens_.size() ? tokens_[i] : tokens_.back();
    }
    [[nodiscard]] TokenKind kind() const { return tokens_[pos_].kind; }
    [[nodiscard]] TokenKind peek(std::size_t ahead) const { return peekTok(ahead).kind; }
    [[nodiscard]] bool at(TokenKind k) const { return kind() == k; }
    [[nodiscard]] bool atEnd() const { return kind() == TokenKind::EndOfFile; }
    [[nodiscard]] std::string_view text(const Token& t) const { return src_.substr(t.begin, t.end - t.begin); }
    [[nodiscard]] std::string_view text() const { return text(tok()); }
    [[nodiscard]] Span span(const Token& t) const { return Span{file_.id(), t.begin, t.end}; }
    [[nodiscard]] Span span() const { return span(tok()); }
    // From `begin` to the end of the last consumed token.
    [[nodiscard]] Span spanFrom(std::uint32_t begin) const {
        return Span{file_.id(), begin, prevEnd_ > begin ? prevEnd_ : begin};
    }
    [[nodiscard]] std::uint32_t startOffset() const { return tok().begin; }

    const Token& advance();
    bool accept(TokenKind k);
    // Consumes `k` or reports E0010 ("expected X but found Y") without consuming.
    bool expect(TokenKind k, std::string_view context);
    // Same, building the context text only when the token is missing (no allocation on the
    // common path).
    template <typename MakeContext> bool expectLazy(TokenKind k, MakeContext&& context) {
        if (accept(k)) {
            return true;
        }
        errorExpected(describeKind(k), context());
        return false;
    }
    [[nodiscard]] static std::string describeKind(TokenKind k); // "';'", "identifier"
    ast::Identifier identifier(const Token& t) const;
    // Consumes an identifier or reports E0010 and returns an empty name with the found span.
    ast::Identifier expectIdentifier(std::string_view context);
    template <typename MakeContext> ast::Identifier expectIdentifierLazy(MakeContext&& context) {
        if (at(TokenKind::Identifier)) {
            return identifier(advance());
        }
        return expectIdentifier(context());
    }
    ast::QualifiedName qualifiedName(std::string_view context);

    void errorExpected(std::string_view expected, std::string_view context);
    void errorUnexpected(std::string_view context);
    void report(DiagCode code, Span where, std::string message);
    // --- SFC (parser_sfc.cpp) -----------------------------------------------------------------
    // At a step or transition: parsed into sfc_, or (outside a chart's body) reported and skipped.
    bool parseSfcElement();
    [[nodiscard]] bool atSfcPriorityTransition() const;
    void parseSfcStep(bool initial);
    void parseSfcTransition();
    void parseSfcSteps(std::vector<ast::Identifier>& out, std::string_view context);
    void skipSfcTo(std::string_view end);
    [[nodiscard]] bool atWord(std::string_view word) const; // an identifier spelled `word`, any case
    // A block opened at `open` (e.g. IF) lacks its `end` keyword: E0012 at the current token.
    void missingEnd(TokenKind end, std::string_view what, Span open);
    [[nodiscard]] std::string foundText() const;

    [[nodiscard]] static bool isEndKeyword(TokenKind k);
    [[nodiscard]] static bool isDeclStart(TokenKind k);
    [[nodiscard]] static bool isVarSectionKeyword(TokenKind k);
    [[nodiscard]] static bool isStatementKeyword(TokenKind k);

    // Skips to a plausible restart point: past ';', or before a keyword that opens/closes a
    // statement or declaration. Always consumes at least one token unless already at one.
    void syncStatement();
    void syncDeclaration();
    // Skips tokens of a construct nested too deeply, balancing brackets/blocks so that the
    // enclosing (shallower) levels find their closing tokens. Never recurses.
    void skipNestedExpression();
    void skipNestedStatement();
    void reportTooDeep(std::string_view what);

    // Open-block bookkeeping: a statement list stops at END_X only while some enclosing block
    // expects it; a stray END_X is reported and skipped instead of closing the wrong block.
    void openBlock(TokenKind end) { ++openEnds_[static_cast<std::size_t>(end)]; }
    void closeBlock(TokenKind end) { --openEnds_[static_cast<std::size_t>(end)]; }
    [[nodiscard]] bool isOpen(TokenKind end) const { return openEnds_[static_cast<std::size_t>(end)] > 0; }

    // --- declarations (parser_decls.cpp) ------------------------------------------------------
    void parseDeclarations(std::vector<ast::DeclPtr>& out, TokenKind terminator);
    ast::DeclPtr parseDeclaration();
    std::unique_ptr<ast::PouDecl> parsePou(ast::PouKind pouKind, TokenKind endKind);
    std::unique_ptr<ast::PouDecl> parseMethod(bool prototype);
    std::unique_ptr<ast::PouDecl> parseAction();
    // METHOD, ACTION or PROPERTY, or an access specifier written before METHOD/PROPERTY (truST):
    // a member POU that ends the statements of its enclosing POU.
    [[nodiscard]] static bool isMemberStart(TokenKind k) {
        return k == TokenKind::Method || k == TokenKind::Action || k == TokenKind::Property || k == TokenKind::Public ||
               k == TokenKind::Private || k == TokenKind::Protected || k == TokenKind::Internal;
    }
    void parseModifiers(ast::PouDecl& pou); // access and ABSTRACT/FINAL/OVERRIDE before the name
    // --- METHOD/PROPERTY members and CLASS (parser_oop.cpp) -----------------------------------
    // A METHOD or PROPERTY of `owner`, with the access specifiers truST writes before the keyword.
    void parseMember(ast::PouDecl& owner);
    // PROPERTY name : T with GET … END_GET and/or SET … END_SET, appended to `out` as one METHOD
    // per accessor; `prototype` inside an INTERFACE (accessors without bodies).
    void parseProperty(std::vector<std::unique_ptr<ast::PouDecl>>& out, const ast::PouDecl& lead, bool prototype);
    std::unique_ptr<ast::PouDecl> parseAccessor(ast::Accessor which, const ast::Identifier& name,
                                                const ast::PouDecl& mods, std::size_t typePos, bool prototype);
    // GET or SET (identifiers: see token_kinds.def) at the current token.
    [[nodiscard]] ast::Accessor atAccessor() const;
    void parsePouBody(ast::PouDecl& pou, TokenKind endKind);
    void parsePouItems(ast::PouDecl& pou, TokenKind endKind); // variables, members, statements, SFC
    ast::DeclPtr parseInterface();
    void parseTypeBlock(std::vector<ast::DeclPtr>& out);
    ast::DeclPtr parseConfiguration();
    void parseResourceItems(ast::ResourceDecl& res, bool inConfiguration);
    ast::TaskDecl parseTask();
    ast::ProgramInstanceDecl parseProgramInstance();
    ast::DeclPtr parseNamespace();
    ast::DeclPtr parseUsing();
    ast::VarBlock parseVarBlock();
    void parseVarDecl(std::vector<ast::VarDecl>& out);
    void parseAccessDecl(ast::VarBlock& block);
    void parseConfigDecl(ast::VarBlock& block);
    std::optional<ast::Address> parseAtAddress();
    ast::TypeSpecPtr parseTypeSpec();
    ast::TypeSpecPtr parseTypeSpecInner();
    ast::TypeSpecPtr parseEnumValues(std::uint32_t begin, ast::TypeSpecPtr base);
    ast::TypeSpecPtr parseStructSpec();
    ast::TypeSpecPtr parsePointerSpec(std::uint32_t begin);

    // --- statements (parser_stmts.cpp) --------------------------------------------------------
    // Parses statements until a token that ends the list (END_*, ELSE, ELSIF, UNTIL, a
    // declaration start, or — inside CASE — the next label list).
    void parseStatementList(ast::StmtList& out, bool inCase);
    ast::StmtPtr parseStatement();
    ast::StmtPtr parseIf(std::uint32_t begin);
    ast::StmtPtr parseCase(std::uint32_t begin);
    ast::StmtPtr parseFor(std::uint32_t begin);
    ast::StmtPtr parseWhile(std::uint32_t begin);
    ast::StmtPtr parseRepeat(std::uint32_t begin);
    bool atCaseLabel() const;
    bool endsStatementList(bool inCase) const;
    void expectSemicolon(std::string_view context);
    void closeWith(TokenKind end, std::string_view what, Span open);

    // --- expressions (parser_exprs.cpp) -------------------------------------------------------
    ast::ExprPtr parseExpression();
    ast::ExprPtr parseBinary(int minPrecedence);
    ast::ExprPtr parseUnary();
    ast::ExprPtr parsePower();
    ast::ExprPtr parsePostfix();
    ast::ExprPtr parsePrimary();
    ast::ExprPtr parseLiteral();
    ast::ExprPtr parseTypedLiteral();
    ast::ExprPtr parseDirectAddress();
    void parseArguments(std::vector<ast::Argument>& args);
    ast::ExprPtr parseInitializer();
    ast::ExprPtr parseArrayInit();
    ast::ExprPtr parseStructInit();
    ast::ExprPtr errorExpr(std::string_view context);
    bool decodeLiteralToken(const Token& t, ast::LiteralExpr& lit);

    // --- state --------------------------------------------------------------------------------
    const SourceFile& file_;
    std::string_view src_;
    const std::vector<Token>& tokens_;
    DiagnosticSink& diags_;
    std::size_t pos_ = 0;
    std::uint32_t prevEnd_ = 0;
    std::size_t exprDepth_ = 0;
    std::size_t chainDepth_ = 0; // links of enclosing operator/postfix chains
    std::size_t stmtDepth_ = 0;
    std::size_t declDepth_ = 0;
    std::array<std::uint32_t, static_cast<std::size_t>(TokenKind::Count_)> openEnds_{};
    std::string scratch_;     // reused for literal decoding errors
    SfcChart* sfc_ = nullptr; // the chart of the PROGRAM or FUNCTION_BLOCK body being parsed
};

// RAII depth counter: `if (!guard.ok())` the caller skips instead of recursing.
class DepthGuard {
public:
    DepthGuard(std::size_t& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    [[nodiscard]] bool ok() const { return depth_ <= kMaxNesting; }

private:
    std::size_t& depth_;
};

template <typename T> std::unique_ptr<T> makeNode(Span s) {
    return std::make_unique<T>(s);
}

} // namespace takt::compiler
