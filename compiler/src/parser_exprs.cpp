// Expressions (IEC precedence by precedence climbing), literals and initialisers.
#include <fmt/format.h>

#include "parser_internal.h"
#include "takt/compiler/literals.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

// Deepest tree an expression may build. Operator chains (`a + b + …`, `a.b.c…`) build
// left-deep trees, and every later phase walks trees recursively, so chain links and nesting
// levels together are bounded, not only the nesting.
constexpr std::size_t kMaxChain = 4 * kMaxNesting;

// Restores the chain depth when a chain-building loop returns.
class ChainScope {
public:
    explicit ChainScope(std::size_t& depth) : depth_(depth), saved_(depth) {}
    ~ChainScope() { depth_ = saved_; }
    ChainScope(const ChainScope&) = delete;
    ChainScope& operator=(const ChainScope&) = delete;

private:
    std::size_t& depth_;
    std::size_t saved_;
};

// Binding power of a binary operator; 0 for tokens that are not binary operators.
int precedence(TokenKind k, ast::BinaryOp& op) {
    switch (k) {
    case TokenKind::Or: op = ast::BinaryOp::Or; return 1;
    case TokenKind::OrElse: op = ast::BinaryOp::OrElse; return 1;
    case TokenKind::Xor: op = ast::BinaryOp::Xor; return 2;
    case TokenKind::And:
    case TokenKind::Ampersand: op = ast::BinaryOp::And; return 3;
    case TokenKind::AndThen: op = ast::BinaryOp::AndThen; return 3;
    case TokenKind::Equal: op = ast::BinaryOp::Eq; return 4;
    case TokenKind::NotEqual: op = ast::BinaryOp::Ne; return 4;
    case TokenKind::Less: op = ast::BinaryOp::Lt; return 5;
    case TokenKind::LessEqual: op = ast::BinaryOp::Le; return 5;
    case TokenKind::Greater: op = ast::BinaryOp::Gt; return 5;
    case TokenKind::GreaterEqual: op = ast::BinaryOp::Ge; return 5;
    case TokenKind::Plus: op = ast::BinaryOp::Add; return 6;
    case TokenKind::Minus: op = ast::BinaryOp::Sub; return 6;
    case TokenKind::Star: op = ast::BinaryOp::Mul; return 7;
    case TokenKind::Slash: op = ast::BinaryOp::Div; return 7;
    case TokenKind::Mod: op = ast::BinaryOp::Mod; return 7;
    default: return 0;
    }
}

bool isUnaryOperator(TokenKind k) {
    return k == TokenKind::Minus || k == TokenKind::Plus || k == TokenKind::Not;
}

ast::UnaryOp unaryOp(TokenKind k) {
    return k == TokenKind::Minus ? ast::UnaryOp::Neg : k == TokenKind::Plus ? ast::UnaryOp::Plus : ast::UnaryOp::Not;
}

bool isCallable(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::Name:
    case ast::ExprKind::Member:
    case ast::ExprKind::Index:
    case ast::ExprKind::Deref:
    case ast::ExprKind::This:
    case ast::ExprKind::Super: return true;
    default: return false;
    }
}

struct IntRange {
    std::string_view name;
    std::uint64_t maxPositive;
    std::uint64_t maxNegative; // magnitude of the minimum; 0 for unsigned types
};

constexpr IntRange kIntRanges[] = {
    {"SINT", 127, 128},
    {"INT", 32767, 32768},
    {"DINT", 2147483647, 2147483648ULL},
    {"LINT", 9223372036854775807ULL, 9223372036854775808ULL},
    {"USINT", 255, 0},
    {"UINT", 65535, 0},
    {"UDINT", 4294967295ULL, 0},
    {"ULINT", ~0ULL, 0},
    {"BYTE", 255, 0},
    {"WORD", 65535, 0},
    {"DWORD", 4294967295ULL, 0},
    {"LWORD", ~0ULL, 0},
};

const IntRange* intRange(std::string_view type) {
    for (const IntRange& r : kIntRanges) {
        if (sameName(type, r.name)) {
            return &r;
        }
    }
    return nullptr;
}

} // namespace

ast::ExprPtr Parser::errorExpr(std::string_view context) {
    errorExpected("an expression", context);
    return makeNode<ast::ErrorExpr>(Span{file_.id(), tok().begin, tok().begin});
}

ast::ExprPtr Parser::parseExpression() {
    return parseBinary(1);
}

ast::ExprPtr Parser::parseBinary(int minPrecedence) {
    std::uint32_t begin = startOffset();
    ast::ExprPtr lhs = parseUnary();
    ChainScope scope(chainDepth_);
    for (;;) {
        ast::BinaryOp op{};
        int prec = precedence(kind(), op);
        if (prec == 0 || prec < minPrecedence) {
            return lhs;
        }
        if (++chainDepth_ + exprDepth_ > kMaxChain) {
            reportTooDeep("operator chains");
            skipNestedExpression();
            return makeNode<ast::ErrorExpr>(spanFrom(begin));
        }
        advance();
        ast::ExprPtr rhs = parseBinary(prec + 1);
        auto bin = makeNode<ast::BinaryExpr>(spanFrom(begin));
        bin->op = op;
        bin->lhs = std::move(lhs);
        bin->rhs = std::move(rhs);
        lhs = std::move(bin);
    }
}

ast::ExprPtr Parser::parseUnary() {
    DepthGuard guard(exprDepth_);
    std::uint32_t begin = startOffset();
    if (!guard.ok()) {
        reportTooDeep("expressions");
        skipNestedExpression();
        return makeNode<ast::ErrorExpr>(spanFrom(begin));
    }
    if (isUnaryOperator(kind())) {
        ast::UnaryOp op = unaryOp(advance().kind);
        ast::ExprPtr operand = parseUnary();
        auto un = makeNode<ast::UnaryExpr>(spanFrom(begin));
        un->op = op;
        un->operand = std::move(operand);
        return un;
    }
    return parsePower();
}

// `**` binds tighter than unary operators (LANGUAGE.md) and is left-associative; a sign right
// after `**` applies to the next operand only (`2 ** -1`).
ast::ExprPtr Parser::parsePower() {
    std::uint32_t begin = startOffset();
    ast::ExprPtr lhs = parsePostfix();
    ChainScope scope(chainDepth_);
    while (at(TokenKind::Power)) {
        if (++chainDepth_ + exprDepth_ > kMaxChain) {
            reportTooDeep("operator chains");
            skipNestedExpression();
            return makeNode<ast::ErrorExpr>(spanFrom(begin));
        }
        advance();
        ast::ExprPtr rhs;
        if (isUnaryOperator(kind())) {
            std::uint32_t signBegin = startOffset();
            ast::UnaryOp op = unaryOp(advance().kind);
            ast::ExprPtr operand = parsePostfix();
            auto un = makeNode<ast::UnaryExpr>(spanFrom(signBegin));
            un->op = op;
            un->operand = std::move(operand);
            rhs = std::move(un);
        } else {
            rhs = parsePostfix();
        }
        auto bin = makeNode<ast::BinaryExpr>(spanFrom(begin));
        bin->op = ast::BinaryOp::Pow;
        bin->lhs = std::move(lhs);
        bin->rhs = std::move(rhs);
        lhs = std::move(bin);
    }
    return lhs;
}

ast::ExprPtr Parser::parsePostfix() {
    std::uint32_t begin = startOffset();
    ast::ExprPtr e = parsePrimary();
    ChainScope scope(chainDepth_);
    for (;; ++chainDepth_) {
        TokenKind k = kind();
        if (k != TokenKind::Dot && k != TokenKind::LBracket && k != TokenKind::Caret &&
            !(k == TokenKind::LParen && isCallable(*e))) {
            return e;
        }
        if (chainDepth_ + exprDepth_ >= kMaxChain) {
            reportTooDeep("member and index chains");
            skipNestedExpression();
            return makeNode<ast::ErrorExpr>(spanFrom(begin));
        }
        if (k == TokenKind::Dot) {
            TokenKind next = peek(1);
            if (next == TokenKind::Identifier) {
                advance();
                auto m = makeNode<ast::MemberExpr>(Span{});
                m->member = identifier(advance());
                m->object = std::move(e);
                m->span = spanFrom(begin);
                e = std::move(m);
            } else if (next == TokenKind::IntLiteral || next == TokenKind::DirectAddress) {
                advance();
                const Token& bitTok = advance();
                std::string_view t = text(bitTok);
                bool percent = next == TokenKind::DirectAddress;
                std::string_view digits = t;
                if (percent) {
                    digits = t.size() > 2 && (t[1] == 'X' || t[1] == 'x') ? t.substr(2) : std::string_view{};
                }
                std::uint64_t bit = 0;
                if (digits.empty() || !decodeInteger(digits, bit, scratch_) || bit > 63) {
                    report(DiagCode::BitAccessInvalid, span(bitTok),
                           fmt::format("'{}' is not a bit number for partial bit access (use .n or .%Xn)", t));
                    bit = 0;
                }
                auto b = makeNode<ast::BitAccessExpr>(spanFrom(begin));
                b->object = std::move(e);
                b->bit = static_cast<std::uint32_t>(bit);
                b->percentForm = percent;
                e = std::move(b);
            } else {
                advance();
                errorExpected("a member name or bit number", "after '.'");
                return e;
            }
        } else if (k == TokenKind::LBracket) {
            advance();
            auto ix = makeNode<ast::IndexExpr>(Span{});
            ix->array = std::move(e);
            do {
                ix->indices.push_back(parseExpression());
            } while (accept(TokenKind::Comma));
            expect(TokenKind::RBracket, "to close the index list");
            ix->span = spanFrom(begin);
            e = std::move(ix);
        } else if (k == TokenKind::Caret) {
            advance();
            auto d = makeNode<ast::DerefExpr>(spanFrom(begin));
            d->reference = std::move(e);
            e = std::move(d);
        } else {
            auto call = makeNode<ast::CallExpr>(Span{});
            call->callee = std::move(e);
            parseArguments(call->args);
            call->span = spanFrom(begin);
            e = std::move(call);
        }
    }
}

void Parser::parseArguments(std::vector<ast::Argument>& args) {
    expect(TokenKind::LParen, "to start the argument list");
    if (accept(TokenKind::RParen)) {
        return;
    }
    for (;;) {
        ast::Argument a;
        std::uint32_t begin = startOffset();
        bool formal = false;
        if (at(TokenKind::Not) && peek(1) == TokenKind::Identifier && peek(2) == TokenKind::Arrow) {
            advance();
            a.negated = true;
            formal = true;
        }
        if (formal || (at(TokenKind::Identifier) && (peek(1) == TokenKind::Assign || peek(1) == TokenKind::Arrow))) {
            a.name = identifier(advance());
            a.output = advance().kind == TokenKind::Arrow;
            // `q =>` with nothing after it leaves the output unconnected.
            if (!(a.output && (at(TokenKind::Comma) || at(TokenKind::RParen)))) {
                a.value = parseExpression();
            }
        } else {
            a.value = parseExpression();
        }
        a.span = spanFrom(begin);
        args.push_back(std::move(a));
        if (accept(TokenKind::Comma)) {
            continue;
        }
        expect(TokenKind::RParen, "to close the argument list");
        return;
    }
}

ast::ExprPtr Parser::parsePrimary() {
    std::uint32_t begin = startOffset();
    switch (kind()) {
    case TokenKind::IntLiteral:
    case TokenKind::RealLiteral:
    case TokenKind::StringLiteral:
    case TokenKind::WStringLiteral:
    case TokenKind::TimeLiteral:
    case TokenKind::DateLiteral:
    case TokenKind::TodLiteral:
    case TokenKind::DtLiteral: return parseLiteral();
    case TokenKind::True:
    case TokenKind::False: {
        auto lit = makeNode<ast::LiteralExpr>(span());
        lit->literalKind = ast::LiteralKind::Bool;
        lit->boolValue = advance().kind == TokenKind::True;
        return lit;
    }
    case TokenKind::Null: {
        auto lit = makeNode<ast::LiteralExpr>(span());
        lit->literalKind = ast::LiteralKind::Null;
        advance();
        return lit;
    }
    case TokenKind::TypedPrefix: return parseTypedLiteral();
    case TokenKind::Hash:
        // Siemens SCL's `#name`: a variable of the POU's own interface. The NameExpr's span
        // covers the '#' and its name does not, which tells BodyChecker::checkName to look in
        // the POU only.
        if (peek(1) == TokenKind::Identifier) {
            advance();
            auto n = makeNode<ast::NameExpr>(Span{});
            n->name = identifier(advance());
            n->span = spanFrom(begin);
            return n;
        }
        return errorExpr("");
    case TokenKind::Identifier: {
        auto n = makeNode<ast::NameExpr>(span());
        n->name = identifier(advance());
        return n;
    }
    case TokenKind::And:
    case TokenKind::Or:
    case TokenKind::Xor:
    case TokenKind::Mod:
        // The standard functions AND(…), OR(…), XOR(…), MOD(…) share their operator's keyword.
        if (peek(1) == TokenKind::LParen) {
            auto n = makeNode<ast::NameExpr>(span());
            n->name = identifier(advance());
            return n;
        }
        return errorExpr("");
    case TokenKind::This: advance(); return makeNode<ast::ThisExpr>(spanFrom(begin));
    case TokenKind::Super: advance(); return makeNode<ast::SuperExpr>(spanFrom(begin));
    case TokenKind::Ref: {
        advance();
        auto r = makeNode<ast::RefExpr>(Span{});
        if (expect(TokenKind::LParen, "after REF")) {
            r->operand = parseExpression();
            expect(TokenKind::RParen, "to close REF(");
        } else {
            r->operand = makeNode<ast::ErrorExpr>(span());
        }
        r->span = spanFrom(begin);
        return r;
    }
    case TokenKind::LParen: {
        advance();
        auto p = makeNode<ast::ParenExpr>(Span{});
        p->inner = parseExpression();
        expect(TokenKind::RParen, "to close '('");
        p->span = spanFrom(begin);
        return p;
    }
    case TokenKind::DirectAddress: return parseDirectAddress();
    case TokenKind::Error:
        advance(); // already reported by the lexer
        return makeNode<ast::ErrorExpr>(spanFrom(begin));
    default: return errorExpr("");
    }
}

bool Parser::decodeLiteralToken(const Token& t, ast::LiteralExpr& lit) {
    std::string_view s = text(t);
    bool ok = true;
    DiagCode code = DiagCode::InvalidNumber;
    switch (t.kind) {
    case TokenKind::IntLiteral:
        lit.literalKind = ast::LiteralKind::Int;
        ok = decodeInteger(s, lit.intValue, scratch_);
        break;
    case TokenKind::RealLiteral:
        lit.literalKind = ast::LiteralKind::Real;
        ok = decodeReal(s, lit.realValue, scratch_);
        break;
    case TokenKind::StringLiteral:
    case TokenKind::WStringLiteral: {
        bool wide = t.kind == TokenKind::WStringLiteral;
        lit.literalKind = wide ? ast::LiteralKind::WString : ast::LiteralKind::String;
        ok = decodeString(s, wide, lit.stringValue, scratch_);
        code = DiagCode::InvalidEscape;
        break;
    }
    case TokenKind::TimeLiteral:
    case TokenKind::DateLiteral:
    case TokenKind::TodLiteral:
    case TokenKind::DtLiteral: {
        std::string_view prefix = literalPrefix(s);
        lit.typePrefix = std::make_unique<ast::Identifier>(ast::Identifier{
            std::string(prefix), Span{file_.id(), t.begin, t.begin + static_cast<std::uint32_t>(prefix.size())}});
        std::string_view body = literalBody(s);
        code = DiagCode::InvalidTimeLiteral;
        if (t.kind == TokenKind::TimeLiteral) {
            lit.literalKind = ast::LiteralKind::Time;
            ok = decodeDuration(body, lit.nanos, scratch_);
        } else if (t.kind == TokenKind::DateLiteral) {
            lit.literalKind = ast::LiteralKind::Date;
            ok = decodeDate(body, lit.nanos, scratch_);
        } else if (t.kind == TokenKind::TodLiteral) {
            lit.literalKind = ast::LiteralKind::Tod;
            ok = decodeTimeOfDay(body, lit.nanos, scratch_);
        } else {
            lit.literalKind = ast::LiteralKind::Dt;
            ok = decodeDateAndTime(body, lit.nanos, scratch_);
        }
        break;
    }
    default:
        ok = false;
        scratch_ = fmt::format("'{}' is not a literal", s);
        break;
    }
    if (!ok) {
        report(code, span(t), scratch_);
    }
    return ok;
}

ast::ExprPtr Parser::parseLiteral() {
    const Token& t = advance();
    auto lit = makeNode<ast::LiteralExpr>(span(t));
    decodeLiteralToken(t, *lit);
    return lit;
}

// INT#5, WORD#16#FF, INT#-5, BOOL#1, REAL#1.5, STRING#'x' — or Mode#Run (an enum literal).
ast::ExprPtr Parser::parseTypedLiteral() {
    std::uint32_t begin = startOffset();
    const Token& prefixTok = advance();
    std::string_view prefix = text(prefixTok);
    prefix.remove_suffix(1); // the '#'
    ast::Identifier typeName{std::string(prefix), Span{file_.id(), prefixTok.begin, prefixTok.end - 1}};
    if (!isElementaryTypeName(prefix)) {
        TokenKind next = kind();
        bool valueLike = next == TokenKind::IntLiteral || next == TokenKind::RealLiteral ||
                         next == TokenKind::StringLiteral || next == TokenKind::WStringLiteral ||
                         next == TokenKind::Minus || next == TokenKind::Plus || next == TokenKind::True ||
                         next == TokenKind::False;
        if (valueLike) {
            // `INTEGER#5`: a value where an enum literal would have a name — a misspelt type.
            if (next == TokenKind::Minus || next == TokenKind::Plus) {
                advance();
            }
            if (at(TokenKind::IntLiteral) || at(TokenKind::RealLiteral) || at(TokenKind::StringLiteral) ||
                at(TokenKind::WStringLiteral) || at(TokenKind::True) || at(TokenKind::False)) {
                advance();
            }
            report(DiagCode::InvalidTypedLiteral, spanFrom(begin),
                   fmt::format("'{}' in '{}' names no elementary type", prefix, src_.substr(begin, prevEnd_ - begin)));
            return makeNode<ast::ErrorExpr>(spanFrom(begin));
        }
        auto en = makeNode<ast::EnumLiteralExpr>(Span{});
        en->typeName = std::move(typeName);
        en->value = expectIdentifierLazy([&] { return fmt::format("after '{}#'", prefix); });
        en->span = spanFrom(begin);
        return en;
    }
    auto lit = makeNode<ast::LiteralExpr>(Span{});
    lit->typePrefix = std::make_unique<ast::Identifier>(std::move(typeName));
    bool negative = false;
    if (at(TokenKind::Minus) || at(TokenKind::Plus)) {
        negative = advance().kind == TokenKind::Minus;
    }
    const Token& valueTok = tok();
    TokenKind vk = valueTok.kind;
    auto fail = [&](std::string message) {
        report(DiagCode::InvalidTypedLiteral, spanFrom(begin), std::move(message));
        lit->span = spanFrom(begin);
        return std::move(lit);
    };
    bool isBool = sameName(prefix, "BOOL");
    bool isReal = sameName(prefix, "REAL") || sameName(prefix, "LREAL");
    bool isString = sameName(prefix, "STRING") || sameName(prefix, "CHAR");
    bool isWString = sameName(prefix, "WSTRING") || sameName(prefix, "WCHAR");
    const IntRange* range = intRange(prefix);
    if (isBool && (vk == TokenKind::True || vk == TokenKind::False) && !negative) {
        advance();
        lit->literalKind = ast::LiteralKind::Bool;
        lit->boolValue = vk == TokenKind::True;
    } else if ((isBool || isReal || range != nullptr) &&
               (vk == TokenKind::IntLiteral || vk == TokenKind::RealLiteral)) {
        advance();
        ast::LiteralExpr value{span(valueTok)};
        if (!decodeLiteralToken(valueTok, value)) {
            lit->span = spanFrom(begin);
            return lit;
        }
        if (isBool) {
            if (vk != TokenKind::IntLiteral || value.intValue > 1 || negative) {
                return fail(fmt::format("BOOL#{} is not 0 or 1", text(valueTok)));
            }
            lit->literalKind = ast::LiteralKind::Bool;
            lit->boolValue = value.intValue == 1;
        } else if (isReal) {
            lit->literalKind = ast::LiteralKind::Real;
            lit->realValue = vk == TokenKind::IntLiteral ? static_cast<double>(value.intValue) : value.realValue;
            if (negative) {
                lit->realValue = -lit->realValue;
            }
            lit->negative = negative;
        } else {
            if (vk != TokenKind::IntLiteral) {
                return fail(fmt::format("{}#{} needs an integer value", prefix, text(valueTok)));
            }
            std::uint64_t limit = negative ? range->maxNegative : range->maxPositive;
            if (value.intValue > limit && !(negative && value.intValue == 0)) {
                return fail(fmt::format("{}{} does not fit {}", negative ? "-" : "", text(valueTok), prefix));
            }
            lit->literalKind = ast::LiteralKind::Int;
            lit->intValue = value.intValue;
            lit->negative = negative && value.intValue != 0;
        }
    } else if ((isString && vk == TokenKind::StringLiteral) || (isWString && vk == TokenKind::WStringLiteral)) {
        advance();
        decodeLiteralToken(valueTok, *lit);
        if (negative) {
            return fail(fmt::format("a sign before {}#{}", prefix, text(valueTok)));
        }
    } else {
        return fail(
            fmt::format("typed literal '{}#' is not followed by a {} value (found {})", prefix, prefix, foundText()));
    }
    lit->span = spanFrom(begin);
    return lit;
}

ast::ExprPtr Parser::parseDirectAddress() {
    const Token& t = advance();
    auto d = makeNode<ast::DirectAddressExpr>(span(t));
    if (!parseAddress(text(t), d->address, scratch_)) {
        report(DiagCode::InvalidAddress, span(t), scratch_);
    }
    d->address.span = span(t);
    return d;
}

ast::ExprPtr Parser::parseInitializer() {
    DepthGuard guard(exprDepth_);
    std::uint32_t begin = startOffset();
    if (!guard.ok()) {
        reportTooDeep("initialisers");
        skipNestedExpression();
        return makeNode<ast::ErrorExpr>(spanFrom(begin));
    }
    if (at(TokenKind::LBracket)) {
        return parseArrayInit();
    }
    if (at(TokenKind::LParen) &&
        (peek(1) == TokenKind::RParen || (peek(1) == TokenKind::Identifier && peek(2) == TokenKind::Assign))) {
        return parseStructInit();
    }
    return parseExpression();
}

ast::ExprPtr Parser::parseArrayInit() {
    std::uint32_t begin = startOffset();
    advance(); // '['
    auto init = makeNode<ast::ArrayInitExpr>(Span{});
    if (!accept(TokenKind::RBracket)) {
        for (;;) {
            ast::ArrayInitElement el;
            std::uint32_t elBegin = startOffset();
            if (at(TokenKind::IntLiteral) && peek(1) == TokenKind::LParen) {
                el.repeat = parseLiteral();
                advance(); // '('
                if (!at(TokenKind::RParen)) {
                    el.value = parseInitializer();
                }
                expect(TokenKind::RParen, "to close the repeated element");
            } else {
                el.value = parseInitializer();
            }
            el.span = spanFrom(elBegin);
            init->elements.push_back(std::move(el));
            if (accept(TokenKind::Comma)) {
                continue;
            }
            expect(TokenKind::RBracket, "to close the array initialiser");
            break;
        }
    }
    init->span = spanFrom(begin);
    return init;
}

ast::ExprPtr Parser::parseStructInit() {
    std::uint32_t begin = startOffset();
    advance(); // '('
    auto init = makeNode<ast::StructInitExpr>(Span{});
    if (!accept(TokenKind::RParen)) {
        for (;;) {
            ast::FieldInit f;
            f.field = expectIdentifier("in the structure initialiser");
            if (expectLazy(TokenKind::Assign,
                           [&] { return fmt::format("after '{}' in the structure initialiser", f.field.name); })) {
                f.value = parseInitializer();
            } else {
                f.value = makeNode<ast::ErrorExpr>(span());
            }
            init->fields.push_back(std::move(f));
            if (accept(TokenKind::Comma)) {
                continue;
            }
            expect(TokenKind::RParen, "to close the structure initialiser");
            break;
        }
    }
    init->span = spanFrom(begin);
    return init;
}

} // namespace takt::compiler
