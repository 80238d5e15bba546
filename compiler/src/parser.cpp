// Parser core: token access, error reporting and recovery, and the file-level entry points.
#include "takt/compiler/parser.h"

#include <fmt/format.h>

#include "parser_internal.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/parse_expression.h"

namespace takt::compiler {

namespace {

// The parser relies on a final EndOfFile token; a hand-made empty LexResult gets this one.
const std::vector<Token>& nonEmpty(const std::vector<Token>& tokens) {
    static const std::vector<Token> kOnlyEnd{Token{}};
    return tokens.empty() || tokens.back().kind != TokenKind::EndOfFile ? kOnlyEnd : tokens;
}

} // namespace

Parser::Parser(const SourceFile& file, const LexResult& lexed, DiagnosticSink& diags)
    : file_(file), src_(file.text()), tokens_(nonEmpty(lexed.tokens)), diags_(diags) {}

ast::CompilationUnit Parser::parseUnit() {
    ast::CompilationUnit unit;
    unit.file = file_.id();
    parseDeclarations(unit.decls, TokenKind::EndOfFile);
    return unit;
}

const Token& Parser::advance() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::EndOfFile) {
        prevEnd_ = t.end;
        ++pos_;
    }
    return t;
}

bool Parser::accept(TokenKind k) {
    if (kind() != k) {
        return false;
    }
    advance();
    return true;
}

std::string Parser::describeKind(TokenKind k) {
    std::string_view s = tokenSpelling(k);
    bool punctuationOrKeyword = isKeyword(k) || k >= TokenKind::Assign;
    return punctuationOrKeyword ? fmt::format("'{}'", s) : std::string(s);
}

std::string Parser::foundText() const {
    const Token& t = tok();
    if (t.kind == TokenKind::EndOfFile) {
        return "end of file";
    }
    std::string_view s = text(t);
    constexpr std::size_t kMaxShown = 40;
    if (s.size() > kMaxShown) {
        return fmt::format("'{}…'", s.substr(0, kMaxShown));
    }
    return fmt::format("'{}'", s);
}

void Parser::report(DiagCode code, Span where, std::string message) {
    diags_.report(code, where, std::move(message));
}

void Parser::errorExpected(std::string_view expected, std::string_view context) {
    // The lexer already reported an invalid token at this location; do not pile on.
    if (kind() == TokenKind::Error || (pos_ > 0 && tokens_[pos_ - 1].kind == TokenKind::Error)) {
        return;
    }
    std::string msg = context.empty() ? fmt::format("expected {} but found {}", expected, foundText())
                                      : fmt::format("expected {} {} but found {}", expected, context, foundText());
    // When the found token starts a new line, the omission (typically a ';') belongs to the end
    // of the previous line: point there, where the author has to type.
    Span where = tok().lineStart && pos_ > 0 ? Span{file_.id(), prevEnd_, prevEnd_} : span();
    report(DiagCode::ExpectedToken, where, std::move(msg));
}

void Parser::errorUnexpected(std::string_view context) {
    if (kind() == TokenKind::Error) {
        return;
    }
    report(DiagCode::UnexpectedToken, span(), fmt::format("unexpected {} {}", foundText(), context));
}

bool Parser::expect(TokenKind k, std::string_view context) {
    if (accept(k)) {
        return true;
    }
    errorExpected(describeKind(k), context);
    return false;
}

ast::Identifier Parser::identifier(const Token& t) const {
    return ast::Identifier{std::string(text(t)), span(t)};
}

ast::Identifier Parser::expectIdentifier(std::string_view context) {
    if (at(TokenKind::Identifier)) {
        return identifier(advance());
    }
    errorExpected("a name", context);
    return ast::Identifier{std::string(), Span{file_.id(), tok().begin, tok().begin}};
}

ast::QualifiedName Parser::qualifiedName(std::string_view context) {
    ast::QualifiedName qn;
    std::uint32_t begin = startOffset();
    qn.parts.push_back(expectIdentifier(context));
    while (at(TokenKind::Dot) && peek(1) == TokenKind::Identifier) {
        advance();
        qn.parts.push_back(identifier(advance()));
    }
    qn.span = spanFrom(begin);
    return qn;
}

void Parser::missingEnd(TokenKind end, std::string_view what, Span open) {
    LineCol lc = file_.lineCol(open.begin);
    Diagnostic* d = diags_.report(
        DiagCode::MissingEnd, span(),
        fmt::format("missing {} for {} opened at line {}; found {}", tokenSpelling(end), what, lc.line, foundText()));
    if (d != nullptr) {
        d->relate(open, fmt::format("{} opened here", what));
    }
}

bool Parser::isEndKeyword(TokenKind k) {
    switch (k) {
    case TokenKind::EndProgram:
    case TokenKind::EndFunction:
    case TokenKind::EndFunctionBlock:
    case TokenKind::EndMethod:
    case TokenKind::EndAction:
    case TokenKind::EndInterface:
    case TokenKind::EndProperty:
    case TokenKind::EndGet:
    case TokenKind::EndSet:
    case TokenKind::EndClass:
    case TokenKind::EndNamespace:
    case TokenKind::EndTestProgram:
    case TokenKind::EndTestFunctionBlock:
    case TokenKind::EndType:
    case TokenKind::EndStruct:
    case TokenKind::EndUnion:
    case TokenKind::EndVar:
    case TokenKind::EndConfiguration:
    case TokenKind::EndResource:
    case TokenKind::EndIf:
    case TokenKind::EndCase:
    case TokenKind::EndFor:
    case TokenKind::EndWhile:
    case TokenKind::EndRepeat: return true;
    default: return false;
    }
}

bool Parser::isDeclStart(TokenKind k) {
    switch (k) {
    case TokenKind::Program:
    case TokenKind::Function:
    case TokenKind::FunctionBlock:
    case TokenKind::Class:
    case TokenKind::Interface:
    case TokenKind::Type:
    case TokenKind::VarGlobal:
    case TokenKind::VarConfig:
    case TokenKind::VarAccess:
    case TokenKind::Configuration:
    case TokenKind::Namespace:
    case TokenKind::Using:
    case TokenKind::TestProgram:
    case TokenKind::TestFunctionBlock: return true;
    default: return false;
    }
}

bool Parser::isVarSectionKeyword(TokenKind k) {
    switch (k) {
    case TokenKind::Var:
    case TokenKind::VarInput:
    case TokenKind::VarOutput:
    case TokenKind::VarInOut:
    case TokenKind::VarTemp:
    case TokenKind::VarStat:
    case TokenKind::VarGlobal:
    case TokenKind::VarExternal:
    case TokenKind::VarAccess:
    case TokenKind::VarConfig: return true;
    default: return false;
    }
}

bool Parser::isStatementKeyword(TokenKind k) {
    switch (k) {
    case TokenKind::If:
    case TokenKind::Case:
    case TokenKind::For:
    case TokenKind::While:
    case TokenKind::Repeat:
    case TokenKind::Exit:
    case TokenKind::Continue:
    case TokenKind::Return: return true;
    default: return false;
    }
}

void Parser::syncStatement() {
    bool first = true;
    while (!atEnd()) {
        TokenKind k = kind();
        if (k == TokenKind::Semicolon) {
            advance();
            return;
        }
        if (isEndKeyword(k) || isStatementKeyword(k) || isDeclStart(k) || isVarSectionKeyword(k) ||
            k == TokenKind::Else || k == TokenKind::Elsif || k == TokenKind::Until || isMemberStart(k)) {
            return;
        }
        // A new line that starts with `name :=` is almost surely the next statement.
        if (!first && tok().lineStart && k == TokenKind::Identifier && peek(1) == TokenKind::Assign) {
            return;
        }
        first = false;
        advance();
    }
}

void Parser::syncDeclaration() {
    do {
        advance();
    } while (!atEnd() && !isDeclStart(kind()));
}

void Parser::reportTooDeep(std::string_view what) {
    report(
        DiagCode::NestingTooDeep, span(),
        fmt::format("{} nest deeper than {} levels at {}; the construct is skipped", what, kMaxNesting, foundText()));
}

void Parser::skipNestedExpression() {
    std::size_t depth = 0;
    while (!atEnd()) {
        TokenKind k = kind();
        if (k == TokenKind::LParen || k == TokenKind::LBracket) {
            ++depth;
        } else if (k == TokenKind::RParen || k == TokenKind::RBracket) {
            if (depth == 0) {
                return;
            }
            --depth;
        } else if (k == TokenKind::Semicolon || isEndKeyword(k) || isStatementKeyword(k) || isDeclStart(k) ||
                   k == TokenKind::Then || k == TokenKind::Do || k == TokenKind::Of) {
            return;
        } else if (depth == 0 && (k == TokenKind::Comma || k == TokenKind::To || k == TokenKind::By ||
                                  k == TokenKind::DotDot || k == TokenKind::Assign)) {
            return;
        }
        advance();
    }
}

void Parser::skipNestedStatement() {
    std::size_t depth = 0;
    while (!atEnd()) {
        TokenKind k = kind();
        switch (k) {
        case TokenKind::If:
        case TokenKind::Case:
        case TokenKind::For:
        case TokenKind::While:
        case TokenKind::Repeat: ++depth; break;
        case TokenKind::EndIf:
        case TokenKind::EndCase:
        case TokenKind::EndFor:
        case TokenKind::EndWhile:
        case TokenKind::EndRepeat:
            if (depth > 0) {
                --depth;
            }
            if (depth == 0) {
                advance();
                accept(TokenKind::Semicolon);
                return;
            }
            break;
        default:
            if (isEndKeyword(k) || isDeclStart(k) || isMemberStart(k)) {
                return; // a POU-level keyword: let the enclosing levels report the missing ends
            }
            break;
        }
        advance();
    }
}

void Parser::parseDeclarations(std::vector<ast::DeclPtr>& out, TokenKind terminator) {
    while (!atEnd() && !at(terminator)) {
        std::size_t before = pos_;
        if (at(TokenKind::Type)) {
            parseTypeBlock(out);
        } else if (isDeclStart(kind()) || isMemberStart(kind())) {
            if (ast::DeclPtr d = parseDeclaration()) {
                out.push_back(std::move(d));
            }
        } else {
            errorUnexpected("at the top level; expected PROGRAM, FUNCTION, FUNCTION_BLOCK, TYPE, VAR_GLOBAL, "
                            "CONFIGURATION, NAMESPACE or another declaration");
            syncDeclaration();
        }
        if (pos_ == before) {
            advance(); // every iteration consumes input, whatever went wrong
        }
    }
}

ast::CompilationUnit parse(const SourceFile& file, const LexResult& tokens, DiagnosticSink& diags) {
    // Pragmas are tolerated but mean nothing to takt; each one is reported once, so an engineer
    // porting CODESYS code knows that an {attribute …} has no effect here.
    for (const Trivia& t : tokens.trivia) {
        std::string_view text = file.text().substr(t.begin, t.end - t.begin);
        if (t.kind == TriviaKind::Pragma && text.back() == '}') { // an unclosed one is E0007 already
            constexpr std::size_t kShown = 60;
            diags.report(DiagCode::PragmaIgnored, Span{file.id(), t.begin, t.end},
                         "pragma '" + std::string(text.substr(0, kShown)) + (text.size() > kShown ? "…" : "") +
                             "' has no effect in takt");
        }
    }
    Parser parser(file, tokens, diags);
    return parser.parseUnit();
}

ast::CompilationUnit parseSource(const SourceFile& file, DiagnosticSink& diags, Dialect dialect) {
    LexResult lexed = lex(file, diags, dialect);
    return parse(file, lexed, diags);
}

ast::ExprPtr parseExpressionText(const SourceFile& file, DiagnosticSink& diags, Dialect dialect) {
    LexResult lexed = lex(file, diags, dialect);
    Parser parser(file, lexed, diags);
    ast::ExprPtr e = parser.parseExpression();
    if (!parser.atEnd()) {
        parser.errorUnexpected("after the expression");
    }
    return diags.hasErrors() ? nullptr : std::move(e);
}

} // namespace takt::compiler
