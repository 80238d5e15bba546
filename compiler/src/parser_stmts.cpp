// Statements: assignments, calls, IF, CASE, FOR, WHILE, REPEAT, EXIT, CONTINUE, RETURN.
#include <fmt/format.h>

#include "parser_internal.h"

#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

// How far atCaseLabel() looks for the ':' that ends a label list; real label lists are short,
// and the bound keeps statement parsing linear.
constexpr std::size_t kMaxLabelLookahead = 64;

bool isLabelToken(TokenKind k) {
    switch (k) {
    case TokenKind::IntLiteral:
    case TokenKind::Identifier:
    case TokenKind::TypedPrefix:
    case TokenKind::Minus:
    case TokenKind::Plus:
    case TokenKind::DotDot:
    case TokenKind::Comma:
    case TokenKind::Dot:
    case TokenKind::True:
    case TokenKind::False: return true;
    default: return false;
    }
}

} // namespace

bool Parser::atCaseLabel() const {
    for (std::size_t i = 0; i < kMaxLabelLookahead; ++i) {
        TokenKind k = peek(i);
        if (k == TokenKind::Colon) {
            return i > 0;
        }
        if (!isLabelToken(k)) {
            return false;
        }
    }
    return false;
}

bool Parser::endsStatementList(bool inCase) const {
    TokenKind k = kind();
    if (k == TokenKind::EndOfFile || isDeclStart(k) || isMemberStart(k)) {
        return true;
    }
    if (isEndKeyword(k)) {
        return isOpen(k);
    }
    if (k == TokenKind::Elsif) {
        return isOpen(TokenKind::EndIf);
    }
    if (k == TokenKind::Else) {
        return isOpen(TokenKind::EndIf) || isOpen(TokenKind::EndCase);
    }
    if (k == TokenKind::Until) {
        return isOpen(TokenKind::EndRepeat);
    }
    return inCase && atCaseLabel();
}

void Parser::parseStatementList(ast::StmtList& out, bool inCase) {
    while (!endsStatementList(inCase)) {
        std::size_t before = pos_;
        if (isVarSectionKeyword(kind())) {
            errorUnexpected("among statements; variable sections must precede the body");
            while (!atEnd() && !at(TokenKind::EndVar) && !isDeclStart(kind())) {
                advance();
            }
            accept(TokenKind::EndVar);
        } else if (ast::StmtPtr s = parseStatement()) {
            out.push_back(std::move(s));
        }
        if (pos_ == before) {
            advance();
        }
    }
}

void Parser::expectSemicolon(std::string_view context) {
    if (accept(TokenKind::Semicolon)) {
        return;
    }
    errorExpected("';'", context);
    // When the next token starts a new line it is most likely the next statement: keep it.
    if (!tok().lineStart) {
        syncStatement();
    }
}

void Parser::closeWith(TokenKind end, std::string_view what, Span open) {
    if (accept(end)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(end, what, open);
    }
}

ast::StmtPtr Parser::parseStatement() {
    std::uint32_t begin = startOffset();
    TokenKind k = kind();
    switch (k) {
    case TokenKind::Semicolon:
        advance();
        return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Empty, spanFrom(begin));
    case TokenKind::If:
    case TokenKind::Case:
    case TokenKind::For:
    case TokenKind::While:
    case TokenKind::Repeat: {
        DepthGuard guard(stmtDepth_);
        if (!guard.ok()) {
            reportTooDeep("statements");
            skipNestedStatement();
            return nullptr;
        }
        advance();
        switch (k) {
        case TokenKind::If: return parseIf(begin);
        case TokenKind::Case: return parseCase(begin);
        case TokenKind::For: return parseFor(begin);
        case TokenKind::While: return parseWhile(begin);
        default: return parseRepeat(begin);
        }
    }
    case TokenKind::Exit:
    case TokenKind::Continue:
    case TokenKind::Return: {
        advance();
        ast::StmtKind sk = k == TokenKind::Exit       ? ast::StmtKind::Exit
                           : k == TokenKind::Continue ? ast::StmtKind::Continue
                                                      : ast::StmtKind::Return;
        auto s = std::make_unique<ast::SimpleStmt>(sk, spanFrom(begin));
        expectSemicolon(k == TokenKind::Exit       ? "after EXIT"
                        : k == TokenKind::Continue ? "after CONTINUE"
                                                   : "after RETURN");
        return s;
    }
    default: break;
    }
    if (k == TokenKind::Identifier && (peek(1) == TokenKind::Identifier || atSfcPriorityTransition()) &&
        parseSfcElement()) {
        return nullptr;
    }
    // `name:` at the start of a statement is a jump label (a CASE label ends the list before
    // this); `JMP name;` jumps to it. JMP is not a keyword, so a variable may still be called jmp.
    if (k == TokenKind::Identifier && peek(1) == TokenKind::Colon) {
        auto l = std::make_unique<ast::LabelStmt>(ast::StmtKind::Label, Span{});
        l->name = identifier(advance());
        advance(); // ':'
        l->span = spanFrom(begin);
        return l;
    }
    if (k == TokenKind::Identifier && peek(1) == TokenKind::Identifier && peek(2) == TokenKind::Semicolon &&
        upperName(text(tok())) == "JMP") {
        advance();
        auto j = std::make_unique<ast::LabelStmt>(ast::StmtKind::Jump, Span{});
        j->name = identifier(advance());
        j->span = spanFrom(begin);
        expectSemicolon("after JMP");
        return j;
    }
    if (isEndKeyword(k) || k == TokenKind::Else || k == TokenKind::Elsif || k == TokenKind::Until ||
        k == TokenKind::Then || k == TokenKind::Do || k == TokenKind::Of) {
        errorUnexpected("here: no open block expects it");
        if (isEndKeyword(advance().kind)) {
            accept(TokenKind::Semicolon);
        }
        return nullptr;
    }
    ast::ExprPtr target = parseExpression();
    // `r REF= x` (CODESYS). REF cannot follow an expression otherwise, so a space or a comment
    // between REF and '=' changes nothing (the formatter writes `REF=`).
    const bool bind = at(TokenKind::Ref) && peek(1) == TokenKind::Equal;
    if (bind) {
        advance();
    }
    if (accept(bind ? TokenKind::Equal : TokenKind::Assign)) {
        auto a = makeNode<ast::AssignStmt>(Span{});
        a->bindReference = bind;
        a->target = std::move(target);
        a->value = parseExpression();
        a->span = spanFrom(begin);
        expectSemicolon("after the assignment");
        return a;
    }
    if (target->kind == ast::ExprKind::Error) {
        syncStatement();
        return nullptr;
    }
    auto s = makeNode<ast::ExprStmt>(spanFrom(begin));
    s->expr = std::move(target);
    expectSemicolon("after the statement");
    return s;
}

ast::StmtPtr Parser::parseIf(std::uint32_t begin) {
    Span open{file_.id(), begin, prevEnd_};
    auto s = makeNode<ast::IfStmt>(Span{});
    openBlock(TokenKind::EndIf);
    ast::CondBlock first;
    first.condition = parseExpression();
    expect(TokenKind::Then, "after the IF condition");
    parseStatementList(first.body, false);
    first.span = spanFrom(begin);
    s->branches.push_back(std::move(first));
    while (at(TokenKind::Elsif)) {
        std::uint32_t branchBegin = startOffset();
        advance();
        ast::CondBlock b;
        b.condition = parseExpression();
        expect(TokenKind::Then, "after the ELSIF condition");
        parseStatementList(b.body, false);
        b.span = spanFrom(branchBegin);
        s->branches.push_back(std::move(b));
    }
    if (accept(TokenKind::Else)) {
        s->hasElse = true;
        parseStatementList(s->elseBody, false);
    }
    closeBlock(TokenKind::EndIf);
    closeWith(TokenKind::EndIf, "IF", open);
    s->span = spanFrom(begin);
    return s;
}

ast::StmtPtr Parser::parseCase(std::uint32_t begin) {
    Span open{file_.id(), begin, prevEnd_};
    auto s = makeNode<ast::CaseStmt>(Span{});
    s->selector = parseExpression();
    expect(TokenKind::Of, "after the CASE selector");
    openBlock(TokenKind::EndCase);
    while (!atEnd()) {
        std::size_t before = pos_;
        if (accept(TokenKind::Else)) {
            accept(TokenKind::Colon); // `ELSE:` is common in CODESYS code
            s->hasElse = true;
            parseStatementList(s->elseBody, false);
            break;
        }
        if (at(TokenKind::EndCase) || (endsStatementList(false) && !atCaseLabel())) {
            break;
        }
        ast::CaseBranch branch;
        std::uint32_t branchBegin = startOffset();
        do {
            ast::CaseLabel label;
            std::uint32_t labelBegin = startOffset();
            label.lower = parseExpression();
            if (accept(TokenKind::DotDot)) {
                label.upper = parseExpression();
            }
            label.span = spanFrom(labelBegin);
            branch.labels.push_back(std::move(label));
        } while (accept(TokenKind::Comma));
        if (!expect(TokenKind::Colon, "after the CASE labels")) {
            syncStatement();
        }
        parseStatementList(branch.body, true);
        branch.span = spanFrom(branchBegin);
        s->branches.push_back(std::move(branch));
        if (pos_ == before) {
            advance();
        }
    }
    closeBlock(TokenKind::EndCase);
    closeWith(TokenKind::EndCase, "CASE", open);
    s->span = spanFrom(begin);
    return s;
}

ast::StmtPtr Parser::parseFor(std::uint32_t begin) {
    Span open{file_.id(), begin, prevEnd_};
    auto s = makeNode<ast::ForStmt>(Span{});
    s->variable = parseExpression();
    expect(TokenKind::Assign, "after the FOR variable");
    s->from = parseExpression();
    expect(TokenKind::To, "after the FOR start value");
    s->to = parseExpression();
    if (accept(TokenKind::By)) {
        s->step = parseExpression();
    }
    expect(TokenKind::Do, "after the FOR range");
    openBlock(TokenKind::EndFor);
    parseStatementList(s->body, false);
    closeBlock(TokenKind::EndFor);
    closeWith(TokenKind::EndFor, "FOR", open);
    s->span = spanFrom(begin);
    return s;
}

ast::StmtPtr Parser::parseWhile(std::uint32_t begin) {
    Span open{file_.id(), begin, prevEnd_};
    auto s = makeNode<ast::WhileStmt>(Span{});
    s->condition = parseExpression();
    expect(TokenKind::Do, "after the WHILE condition");
    openBlock(TokenKind::EndWhile);
    parseStatementList(s->body, false);
    closeBlock(TokenKind::EndWhile);
    closeWith(TokenKind::EndWhile, "WHILE", open);
    s->span = spanFrom(begin);
    return s;
}

ast::StmtPtr Parser::parseRepeat(std::uint32_t begin) {
    Span open{file_.id(), begin, prevEnd_};
    auto s = makeNode<ast::RepeatStmt>(Span{});
    openBlock(TokenKind::EndRepeat);
    parseStatementList(s->body, false);
    if (expect(TokenKind::Until, "to end the REPEAT body")) {
        s->condition = parseExpression();
    } else {
        s->condition = makeNode<ast::ErrorExpr>(span());
    }
    closeBlock(TokenKind::EndRepeat);
    closeWith(TokenKind::EndRepeat, "REPEAT", open);
    s->span = spanFrom(begin);
    return s;
}

} // namespace takt::compiler
