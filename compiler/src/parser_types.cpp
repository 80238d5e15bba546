// Type specifications, TYPE blocks, and CONFIGURATION / RESOURCE / TASK declarations.
#include <fmt/format.h>

#include "parser_internal.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

// A placeholder after a syntax error, so a declaration always has a type.
ast::TypeSpecPtr errorType(Span at) {
    auto t = makeNode<ast::NamedTypeSpec>(at);
    t->name.parts.push_back(ast::Identifier{std::string(), at});
    t->name.span = at;
    return t;
}

} // namespace

ast::TypeSpecPtr Parser::parseTypeSpec() {
    DepthGuard guard(declDepth_);
    if (!guard.ok()) {
        Span at = span();
        reportTooDeep("type specifications");
        skipNestedExpression();
        return errorType(at);
    }
    return parseTypeSpecInner();
}

ast::TypeSpecPtr Parser::parseTypeSpecInner() {
    std::uint32_t begin = startOffset();
    switch (kind()) {
    case TokenKind::Array: {
        advance();
        auto a = makeNode<ast::ArrayTypeSpec>(Span{});
        if (expect(TokenKind::LBracket, "after ARRAY")) {
            do {
                if (at(TokenKind::Star)) {
                    advance();
                    a->star = true;
                    continue;
                }
                ast::Range r;
                std::uint32_t rangeBegin = startOffset();
                r.lower = parseExpression();
                expect(TokenKind::DotDot, "between the array bounds");
                r.upper = parseExpression();
                r.span = spanFrom(rangeBegin);
                a->dimensions.push_back(std::move(r));
            } while (accept(TokenKind::Comma));
            expect(TokenKind::RBracket, "to close the array bounds");
        }
        expect(TokenKind::Of, "after the array bounds");
        a->element = parseTypeSpec();
        a->span = spanFrom(begin);
        return a;
    }
    case TokenKind::RefTo: {
        advance();
        auto r = makeNode<ast::RefTypeSpec>(Span{});
        r->target = parseTypeSpec();
        r->span = spanFrom(begin);
        return r;
    }
    case TokenKind::Union: return parseStructSpec();
    case TokenKind::String:
    case TokenKind::WString: {
        auto s = makeNode<ast::StringTypeSpec>(Span{});
        s->wide = advance().kind == TokenKind::WString;
        if (accept(TokenKind::LBracket)) {
            s->length = parseExpression();
            expect(TokenKind::RBracket, "to close the string length");
        } else if (accept(TokenKind::LParen)) {
            s->length = parseExpression();
            expect(TokenKind::RParen, "to close the string length");
        }
        s->span = spanFrom(begin);
        return s;
    }
    case TokenKind::Struct: return parseStructSpec();
    case TokenKind::LParen: {
        ast::TypeSpecPtr e = parseEnumValues(begin, nullptr);
        // CODESYS writes the base type after the list: (A, B) DINT
        if (at(TokenKind::Identifier) && !tok().lineStart) {
            auto base = makeNode<ast::NamedTypeSpec>(span());
            base->name = qualifiedName("as the enumeration base type");
            base->span = base->name.span;
            static_cast<ast::EnumTypeSpec&>(*e).base = std::move(base);
            e->span = spanFrom(begin);
        }
        return e;
    }
    case TokenKind::Identifier: {
        if (auto r = parsePointerSpec(begin)) {
            return r;
        }
        auto named = makeNode<ast::NamedTypeSpec>(Span{});
        named->name = qualifiedName("as a type name");
        named->span = spanFrom(begin);
        if (!at(TokenKind::LParen)) {
            return named;
        }
        bool isEnum = peek(1) == TokenKind::Identifier &&
                      (peek(2) == TokenKind::Comma || peek(2) == TokenKind::RParen || peek(2) == TokenKind::Assign);
        if (isEnum) {
            return parseEnumValues(begin, std::move(named));
        }
        advance(); // '('
        auto sub = makeNode<ast::SubrangeTypeSpec>(Span{});
        sub->base = std::move(named);
        std::uint32_t rangeBegin = startOffset();
        sub->range.lower = parseExpression();
        expect(TokenKind::DotDot, "in the subrange");
        sub->range.upper = parseExpression();
        sub->range.span = spanFrom(rangeBegin);
        expect(TokenKind::RParen, "to close the subrange");
        sub->span = spanFrom(begin);
        return sub;
    }
    default: errorExpected("a type", ""); return errorType(Span{file_.id(), tok().begin, tok().begin});
    }
}

ast::TypeSpecPtr Parser::parseEnumValues(std::uint32_t begin, ast::TypeSpecPtr base) {
    auto e = makeNode<ast::EnumTypeSpec>(Span{});
    e->base = std::move(base);
    advance(); // '('
    do {
        ast::EnumValueDecl v;
        v.name = expectIdentifier("in the enumeration");
        if (accept(TokenKind::Assign)) {
            v.value = parseExpression();
        }
        e->values.push_back(std::move(v));
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RParen, "to close the enumeration");
    e->span = spanFrom(begin);
    return e;
}

// CODESYS's `POINTER TO T` and `REFERENCE TO T`: POINTER and REFERENCE are names elsewhere
// (takt does not reserve them), so they start a type only when TO follows.
ast::TypeSpecPtr Parser::parsePointerSpec(std::uint32_t begin) {
    if (peek(1) != TokenKind::To) {
        return nullptr;
    }
    const std::string word = upperName(text(tok()));
    if (word != "POINTER" && word != "REFERENCE") {
        return nullptr;
    }
    advance();
    advance(); // TO
    auto r = makeNode<ast::RefTypeSpec>(Span{});
    r->spelling = word == "POINTER" ? ast::RefSpelling::PointerTo : ast::RefSpelling::ReferenceTo;
    r->target = parseTypeSpec();
    r->span = spanFrom(begin);
    return r;
}

ast::TypeSpecPtr Parser::parseStructSpec() {
    std::uint32_t begin = startOffset();
    Span open = span();
    const bool isUnion = advance().kind == TokenKind::Union; // STRUCT or UNION
    const TokenKind closer = isUnion ? TokenKind::EndUnion : TokenKind::EndStruct;
    const char* opener = isUnion ? "UNION" : "STRUCT";
    auto s = makeNode<ast::StructTypeSpec>(Span{});
    s->isUnion = isUnion;
    if (!isUnion && accept(TokenKind::Extends)) {
        s->extends = qualifiedName("after EXTENDS");
    }
    openBlock(closer);
    while (!atEnd() && !at(closer)) {
        std::size_t before = pos_;
        if (at(TokenKind::Identifier)) {
            parseVarDecl(s->fields);
        } else if (isEndKeyword(kind()) || isDeclStart(kind()) || isVarSectionKeyword(kind())) {
            break;
        } else {
            errorUnexpected(isUnion ? "in a UNION; expected 'member : TYPE;' or END_UNION"
                                    : "in a STRUCT; expected 'field : TYPE;' or END_STRUCT");
            while (!atEnd() && !at(TokenKind::Semicolon) && !isEndKeyword(kind()) && !isDeclStart(kind())) {
                advance();
            }
            accept(TokenKind::Semicolon);
        }
        if (pos_ == before) {
            advance();
        }
    }
    closeBlock(closer);
    if (!accept(closer)) {
        missingEnd(closer, opener, open);
    }
    s->span = spanFrom(begin);
    return s;
}

void Parser::parseTypeBlock(std::vector<ast::DeclPtr>& out) {
    Span open = span();
    advance(); // TYPE
    openBlock(TokenKind::EndType);
    while (!atEnd() && !at(TokenKind::EndType)) {
        std::size_t before = pos_;
        if (at(TokenKind::Identifier)) {
            std::uint32_t begin = startOffset();
            auto td = makeNode<ast::TypeDecl>(Span{});
            td->name = identifier(advance());
            std::optional<ast::QualifiedName> extends;
            if (accept(TokenKind::Extends)) { // CODESYS: TYPE B EXTENDS A : STRUCT … END_STRUCT
                extends = qualifiedName("after EXTENDS");
            }
            if (!expectLazy(TokenKind::Colon, [&] { return fmt::format("after type name '{}'", td->name.name); })) {
                syncStatement();
                continue;
            }
            td->spec = parseTypeSpec();
            if (extends) {
                if (td->spec->kind == ast::TypeSpecKind::Struct) {
                    static_cast<ast::StructTypeSpec&>(*td->spec).extends = std::move(extends);
                } else {
                    report(DiagCode::UnexpectedToken, extends->span,
                           fmt::format("type '{}' EXTENDS '{}' but is not a STRUCT", td->name.name, extends->text()));
                }
            }
            if (accept(TokenKind::Assign)) {
                td->init = parseInitializer();
            }
            td->span = spanFrom(begin);
            bool semicolonOptional = td->spec->kind == ast::TypeSpecKind::Struct;
            out.push_back(std::move(td));
            if (!accept(TokenKind::Semicolon) && !semicolonOptional) {
                errorExpected("';'", "after the type declaration");
                if (!tok().lineStart) {
                    syncStatement();
                }
            }
        } else if (isEndKeyword(kind()) || isDeclStart(kind()) || isMemberStart(kind())) {
            break;
        } else {
            errorUnexpected("in a TYPE block; expected 'Name : type;' or END_TYPE");
            syncStatement();
        }
        if (pos_ == before) {
            advance();
        }
    }
    closeBlock(TokenKind::EndType);
    if (accept(TokenKind::EndType)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndType, "TYPE", open);
    }
}

// --- configurations ---------------------------------------------------------------------------

ast::DeclPtr Parser::parseConfiguration() {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance();
    auto cfg = makeNode<ast::ConfigurationDecl>(Span{});
    cfg->name = expectIdentifier("after CONFIGURATION");
    openBlock(TokenKind::EndConfiguration);
    std::size_t implicitIndex = SIZE_MAX;
    while (!atEnd() && !at(TokenKind::EndConfiguration)) {
        std::size_t before = pos_;
        if (isVarSectionKeyword(kind())) {
            cfg->varBlocks.push_back(parseVarBlock());
        } else if (at(TokenKind::Resource)) {
            std::uint32_t resBegin = startOffset();
            Span resOpen = span();
            advance();
            ast::ResourceDecl res;
            res.name = expectIdentifier("after RESOURCE");
            if (accept(TokenKind::On)) {
                res.on = expectIdentifier("after ON");
            }
            openBlock(TokenKind::EndResource);
            parseResourceItems(res, false);
            closeBlock(TokenKind::EndResource);
            if (accept(TokenKind::EndResource)) {
                accept(TokenKind::Semicolon);
            } else {
                missingEnd(TokenKind::EndResource, fmt::format("RESOURCE '{}'", res.name.name), resOpen);
            }
            res.span = spanFrom(resBegin);
            cfg->resources.push_back(std::move(res));
        } else if (at(TokenKind::Task) || at(TokenKind::Program)) {
            // Tasks and programs directly in the configuration form one implicit resource.
            if (implicitIndex == SIZE_MAX) {
                implicitIndex = cfg->resources.size();
                ast::ResourceDecl res;
                res.name.span = Span{file_.id(), tok().begin, tok().begin};
                res.span = span();
                cfg->resources.push_back(std::move(res));
            }
            ast::ResourceDecl& res = cfg->resources[implicitIndex];
            std::uint32_t resBegin = res.span.begin;
            if (at(TokenKind::Task)) {
                res.tasks.push_back(parseTask());
            } else {
                res.programs.push_back(parseProgramInstance());
            }
            res.span = spanFrom(resBegin);
        } else if (isDeclStart(kind()) || isEndKeyword(kind())) {
            break;
        } else {
            errorUnexpected("in a CONFIGURATION; expected RESOURCE, TASK, PROGRAM, VAR_GLOBAL or END_CONFIGURATION");
            syncStatement();
        }
        if (pos_ == before) {
            advance();
        }
    }
    closeBlock(TokenKind::EndConfiguration);
    if (accept(TokenKind::EndConfiguration)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndConfiguration, fmt::format("CONFIGURATION '{}'", cfg->name.name), open);
    }
    cfg->span = spanFrom(begin);
    return cfg;
}

void Parser::parseResourceItems(ast::ResourceDecl& res, bool /*inConfiguration*/) {
    while (!atEnd() && !at(TokenKind::EndResource)) {
        std::size_t before = pos_;
        if (isVarSectionKeyword(kind())) {
            res.varBlocks.push_back(parseVarBlock());
        } else if (at(TokenKind::Task)) {
            res.tasks.push_back(parseTask());
        } else if (at(TokenKind::Program)) {
            res.programs.push_back(parseProgramInstance());
        } else if (isDeclStart(kind()) || isEndKeyword(kind())) {
            break;
        } else {
            errorUnexpected(
                fmt::format("in RESOURCE '{}'; expected TASK, PROGRAM, VAR_GLOBAL or END_RESOURCE", res.name.name));
            syncStatement();
        }
        if (pos_ == before) {
            advance();
        }
    }
}

ast::TaskDecl Parser::parseTask() {
    std::uint32_t begin = startOffset();
    advance(); // TASK
    ast::TaskDecl task;
    task.name = expectIdentifier("after TASK");
    if (expectLazy(TokenKind::LParen, [&] { return fmt::format("after TASK '{}'", task.name.name); }) &&
        !accept(TokenKind::RParen)) {
        do {
            ast::Identifier setting = expectIdentifier("in the TASK settings");
            if (!expectLazy(TokenKind::Assign, [&] { return fmt::format("after '{}'", setting.name); })) {
                break;
            }
            ast::ExprPtr value = parseExpression();
            if (sameName(setting.name, "INTERVAL")) {
                task.interval = std::move(value);
            } else if (sameName(setting.name, "PRIORITY")) {
                task.priority = std::move(value);
            } else if (sameName(setting.name, "SINGLE")) {
                task.single = std::move(value);
            } else if (!setting.name.empty()) {
                report(DiagCode::UnexpectedToken, setting.span,
                       fmt::format("unknown TASK setting '{}'; expected INTERVAL, PRIORITY or SINGLE", setting.name));
            }
        } while (accept(TokenKind::Comma));
        expect(TokenKind::RParen, "to close the TASK settings");
    }
    task.span = spanFrom(begin);
    expectSemicolon("after the TASK declaration");
    return task;
}

ast::ProgramInstanceDecl Parser::parseProgramInstance() {
    std::uint32_t begin = startOffset();
    advance(); // PROGRAM
    ast::ProgramInstanceDecl p;
    if (accept(TokenKind::Retain)) {
        p.retain = true;
    } else if (accept(TokenKind::NonRetain)) {
        p.nonRetain = true;
    }
    p.name = expectIdentifier("after PROGRAM");
    if (accept(TokenKind::With)) {
        p.task = expectIdentifier("after WITH");
    }
    if (expectLazy(TokenKind::Colon, [&] { return fmt::format("after program instance '{}'", p.name.name); })) {
        p.type = qualifiedName("as the program type");
        if (at(TokenKind::LParen)) {
            parseArguments(p.args);
        }
    }
    p.span = spanFrom(begin);
    expectSemicolon("after the program instance");
    return p;
}

} // namespace takt::compiler
