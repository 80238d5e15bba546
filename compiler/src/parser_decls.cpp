// Declarations: POUs, methods, interfaces, variable sections, types, configurations,
// namespaces.
#include <fmt/format.h>

#include "parser_internal.h"
#include "sfc.h"
#include "takt/compiler/literals.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

ast::VarSection sectionOf(TokenKind k) {
    switch (k) {
    case TokenKind::VarTemp: return ast::VarSection::Temp;
    case TokenKind::VarStat: return ast::VarSection::Static;
    case TokenKind::VarInput: return ast::VarSection::Input;
    case TokenKind::VarOutput: return ast::VarSection::Output;
    case TokenKind::VarInOut: return ast::VarSection::InOut;
    case TokenKind::VarGlobal: return ast::VarSection::Global;
    case TokenKind::VarExternal: return ast::VarSection::External;
    case TokenKind::VarAccess: return ast::VarSection::Access;
    case TokenKind::VarConfig: return ast::VarSection::Config;
    default: return ast::VarSection::Var;
    }
}

} // namespace

ast::DeclPtr Parser::parseDeclaration() {
    switch (kind()) {
    case TokenKind::Program: return parsePou(ast::PouKind::Program, TokenKind::EndProgram);
    case TokenKind::Function: return parsePou(ast::PouKind::Function, TokenKind::EndFunction);
    case TokenKind::FunctionBlock: return parsePou(ast::PouKind::FunctionBlock, TokenKind::EndFunctionBlock);
    case TokenKind::Class: return parsePou(ast::PouKind::FunctionBlock, TokenKind::EndClass);
    case TokenKind::TestProgram: return parsePou(ast::PouKind::TestProgram, TokenKind::EndTestProgram);
    case TokenKind::TestFunctionBlock:
        return parsePou(ast::PouKind::TestFunctionBlock, TokenKind::EndTestFunctionBlock);
    case TokenKind::Method:
        errorUnexpected("outside a FUNCTION_BLOCK or PROGRAM");
        (void)parseMethod(false);
        return nullptr;
    case TokenKind::Action:
        errorUnexpected("outside a FUNCTION_BLOCK or PROGRAM");
        (void)parseAction();
        return nullptr;
    case TokenKind::Property: {
        errorUnexpected("outside a FUNCTION_BLOCK, CLASS or INTERFACE");
        std::vector<std::unique_ptr<ast::PouDecl>> dropped;
        parseProperty(dropped, ast::PouDecl(Span{}), false);
        return nullptr;
    }
    case TokenKind::Interface: return parseInterface();
    case TokenKind::VarGlobal:
    case TokenKind::VarConfig:
    case TokenKind::VarAccess: {
        auto g = makeNode<ast::GlobalVarsDecl>(span());
        g->block = parseVarBlock();
        g->span = g->block.span;
        return g;
    }
    case TokenKind::Configuration: return parseConfiguration();
    case TokenKind::Namespace: return parseNamespace();
    case TokenKind::Using: return parseUsing();
    default: errorUnexpected("at the top level"); return nullptr;
    }
}

std::unique_ptr<ast::PouDecl> Parser::parsePou(ast::PouKind pouKind, TokenKind endKind) {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance();
    auto pou = makeNode<ast::PouDecl>(Span{});
    pou->pouKind = pouKind;
    pou->isClass = endKind == TokenKind::EndClass;
    const char* keyword = pou->isClass ? "CLASS" : ast::pouKeyword(pouKind);
    parseModifiers(*pou);
    pou->name = expectIdentifierLazy([&] { return fmt::format("after {}", keyword); });
    if (accept(TokenKind::Colon)) {
        pou->returnType = parseTypeSpec();
    }
    for (;;) {
        if (accept(TokenKind::Extends)) {
            pou->extends = qualifiedName("after EXTENDS");
        } else if (accept(TokenKind::Implements)) {
            do {
                pou->implements.push_back(qualifiedName("after IMPLEMENTS"));
            } while (accept(TokenKind::Comma));
        } else {
            break;
        }
    }
    accept(TokenKind::Semicolon); // some exporters write `FUNCTION f : INT;`
    openBlock(endKind);
    parsePouBody(*pou, endKind);
    closeBlock(endKind);
    if (accept(endKind)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(endKind, fmt::format("{} '{}'", keyword, pou->name.name), open);
    }
    pou->span = spanFrom(begin);
    return pou;
}

void Parser::parsePouBody(ast::PouDecl& pou, TokenKind endKind) {
    // A PROGRAM's or FUNCTION_BLOCK's body may be an SFC chart; its METHODs and ACTIONs may not.
    SfcChart chart;
    SfcChart* const outer = sfc_;
    const bool charted = pou.pouKind == ast::PouKind::Program || pou.pouKind == ast::PouKind::FunctionBlock;
    sfc_ = charted ? &chart : nullptr;
    parsePouItems(pou, endKind);
    sfc_ = outer;
    if (!chart.empty()) {
        lowerSfc(pou, chart, diags_);
    }
}

void Parser::parsePouItems(ast::PouDecl& pou, TokenKind endKind) {
    bool sawStatements = false;
    while (!atEnd() && !at(endKind)) {
        std::size_t before = pos_;
        if (isVarSectionKeyword(kind()) && !sawStatements) {
            pou.varBlocks.push_back(parseVarBlock());
        } else if (isMemberStart(kind())) {
            if (pou.pouKind == ast::PouKind::Method) {
                break; // END_METHOD is missing: this is the next method of the enclosing POU
            }
            if (at(TokenKind::Action)) {
                if (pou.pouKind != ast::PouKind::FunctionBlock && pou.pouKind != ast::PouKind::Program) {
                    errorUnexpected(fmt::format("in {} '{}': only FUNCTION_BLOCKs and PROGRAMs have actions",
                                                ast::pouKeyword(pou.pouKind), pou.name.name));
                }
                pou.methods.push_back(parseAction());
                continue;
            }
            if (pou.pouKind == ast::PouKind::Function) {
                errorUnexpected(
                    fmt::format("in FUNCTION '{}': only FUNCTION_BLOCKs and PROGRAMs have methods", pou.name.name));
            }
            parseMember(pou);
        } else if (endsStatementList(false)) {
            break;
        } else {
            parseStatementList(pou.body, false);
            sawStatements = true;
        }
        if (pos_ == before) {
            errorUnexpected(fmt::format("in {} '{}'", ast::pouKeyword(pou.pouKind), pou.name.name));
            advance();
        }
    }
}

// ACTION name [:] statements END_ACTION inside a FUNCTION_BLOCK or PROGRAM (IEC 61131-3, CODESYS):
// statements on the POU's own variables, called as inst.name() or name(). It is compiled as a
// METHOD without variables or result.
std::unique_ptr<ast::PouDecl> Parser::parseAction() {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance(); // ACTION
    auto a = makeNode<ast::PouDecl>(Span{});
    a->pouKind = ast::PouKind::Method;
    a->isAction = true;
    a->name = expectIdentifier("after ACTION");
    accept(TokenKind::Colon);
    accept(TokenKind::Semicolon);
    openBlock(TokenKind::EndAction);
    parsePouBody(*a, TokenKind::EndAction);
    closeBlock(TokenKind::EndAction);
    for (const ast::VarBlock& b : a->varBlocks) {
        report(DiagCode::InvalidDeclSection, b.span,
               fmt::format("ACTION '{}' has no variables of its own; declare them in its POU", a->name.name));
    }
    if (accept(TokenKind::EndAction)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndAction, fmt::format("ACTION '{}'", a->name.name), open);
    }
    a->span = spanFrom(begin);
    return a;
}

// PUBLIC, PRIVATE, PROTECTED, INTERNAL, ABSTRACT, FINAL in any order before a POU's or METHOD's name;
// OVERRIDE (not a keyword) when a name follows it.
void Parser::parseModifiers(ast::PouDecl& pou) {
    for (;; advance()) {
        switch (kind()) {
        case TokenKind::Identifier:
            // `METHOD Override x := 1;` names the method Override: x starts its body.
            if (!sameName(text(), "OVERRIDE") || peek(1) != TokenKind::Identifier || peek(2) == TokenKind::Assign ||
                peek(2) == TokenKind::LParen || peek(2) == TokenKind::Dot || peek(2) == TokenKind::LBracket ||
                peek(2) == TokenKind::Caret) {
                return;
            }
            pou.isOverride = true;
            break;
        case TokenKind::Public: pou.access = ast::Access::Public; break;
        case TokenKind::Private: pou.access = ast::Access::Private; break;
        case TokenKind::Protected: pou.access = ast::Access::Protected; break;
        case TokenKind::Internal: pou.access = ast::Access::Internal; break;
        case TokenKind::Abstract: pou.isAbstract = true; break;
        case TokenKind::Final: pou.isFinal = true; break;
        default: return;
        }
    }
}

std::unique_ptr<ast::PouDecl> Parser::parseMethod(bool prototype) {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance(); // METHOD
    auto m = makeNode<ast::PouDecl>(Span{});
    m->pouKind = ast::PouKind::Method;
    m->prototypeOnly = prototype;
    parseModifiers(*m);
    m->name = expectIdentifier("after METHOD");
    if (accept(TokenKind::Colon)) {
        m->returnType = parseTypeSpec();
    }
    accept(TokenKind::Semicolon);
    openBlock(TokenKind::EndMethod);
    if (prototype) {
        while (isVarSectionKeyword(kind())) {
            m->varBlocks.push_back(parseVarBlock());
        }
    } else {
        parsePouBody(*m, TokenKind::EndMethod);
    }
    closeBlock(TokenKind::EndMethod);
    if (accept(TokenKind::EndMethod)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndMethod, fmt::format("METHOD '{}'", m->name.name), open);
    }
    m->span = spanFrom(begin);
    return m;
}

ast::DeclPtr Parser::parseInterface() {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance();
    auto itf = makeNode<ast::InterfaceDecl>(Span{});
    itf->name = expectIdentifier("after INTERFACE");
    if (accept(TokenKind::Extends)) {
        do {
            itf->extends.push_back(qualifiedName("after EXTENDS"));
        } while (accept(TokenKind::Comma));
    }
    openBlock(TokenKind::EndInterface);
    while (!atEnd() && !at(TokenKind::EndInterface) && !isDeclStart(kind())) {
        if (at(TokenKind::Method)) {
            itf->methods.push_back(parseMethod(true));
            continue;
        }
        if (at(TokenKind::Property)) {
            parseProperty(itf->methods, ast::PouDecl(Span{}), true);
            continue;
        }
        errorUnexpected(fmt::format("in INTERFACE '{}'; expected METHOD, PROPERTY or END_INTERFACE", itf->name.name));
        do {
            advance();
        } while (!atEnd() && !at(TokenKind::Method) && !at(TokenKind::Property) && !at(TokenKind::EndInterface) &&
                 !isDeclStart(kind()));
    }
    closeBlock(TokenKind::EndInterface);
    if (accept(TokenKind::EndInterface)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndInterface, fmt::format("INTERFACE '{}'", itf->name.name), open);
    }
    itf->span = spanFrom(begin);
    return itf;
}

ast::DeclPtr Parser::parseNamespace() {
    std::uint32_t begin = startOffset();
    Span open = span();
    DepthGuard guard(declDepth_);
    if (!guard.ok()) {
        reportTooDeep("namespaces");
        std::size_t depth = 0;
        while (!atEnd()) {
            if (at(TokenKind::Namespace)) {
                ++depth;
            } else if (at(TokenKind::EndNamespace) && --depth == 0) {
                advance();
                break;
            }
            advance();
        }
        return nullptr;
    }
    advance();
    auto ns = makeNode<ast::NamespaceDecl>(Span{});
    ns->name = qualifiedName("after NAMESPACE");
    openBlock(TokenKind::EndNamespace);
    parseDeclarations(ns->decls, TokenKind::EndNamespace);
    closeBlock(TokenKind::EndNamespace);
    if (accept(TokenKind::EndNamespace)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndNamespace, fmt::format("NAMESPACE '{}'", ns->name.text()), open);
    }
    ns->span = spanFrom(begin);
    return ns;
}

ast::DeclPtr Parser::parseUsing() {
    std::uint32_t begin = startOffset();
    advance();
    auto u = makeNode<ast::UsingDecl>(Span{});
    do {
        u->names.push_back(qualifiedName("after USING"));
    } while (accept(TokenKind::Comma));
    u->span = spanFrom(begin);
    expectSemicolon("after USING");
    return u;
}

// --- variables --------------------------------------------------------------------------------

ast::VarBlock Parser::parseVarBlock() {
    std::uint32_t begin = startOffset();
    Span open = span();
    std::string_view keyword = text();
    ast::VarBlock block;
    block.section = sectionOf(advance().kind);
    for (;;) {
        if (accept(TokenKind::Constant)) {
            block.constant = true;
        } else if (accept(TokenKind::Retain)) {
            block.retain = true;
        } else if (accept(TokenKind::Persistent)) {
            block.retain = true;
            block.persistent = true;
        } else if (accept(TokenKind::NonRetain)) {
            block.nonRetain = true;
        } else {
            break;
        }
    }
    openBlock(TokenKind::EndVar);
    while (!atEnd() && !at(TokenKind::EndVar)) {
        std::size_t before = pos_;
        TokenKind k = kind();
        bool declStart = false;
        if (block.section == ast::VarSection::Config) {
            declStart = k == TokenKind::Identifier && peek(1) != TokenKind::Assign;
        } else {
            declStart = k == TokenKind::Identifier &&
                        (peek(1) == TokenKind::Colon || peek(1) == TokenKind::Comma || peek(1) == TokenKind::At);
        }
        if (declStart) {
            if (block.section == ast::VarSection::Access) {
                parseAccessDecl(block);
            } else if (block.section == ast::VarSection::Config) {
                parseConfigDecl(block);
            } else {
                parseVarDecl(block.vars);
            }
        } else if (isEndKeyword(k) || isVarSectionKeyword(k) || isStatementKeyword(k) || isDeclStart(k) ||
                   isMemberStart(k) || (k == TokenKind::Identifier && peek(1) == TokenKind::Assign)) {
            break; // END_VAR is missing
        } else {
            errorUnexpected("in a variable section; expected 'name : TYPE;' or END_VAR");
            while (!atEnd() && !at(TokenKind::Semicolon) && !at(TokenKind::EndVar) && !isDeclStart(kind())) {
                advance();
            }
            accept(TokenKind::Semicolon);
        }
        if (pos_ == before) {
            advance();
        }
    }
    closeBlock(TokenKind::EndVar);
    if (accept(TokenKind::EndVar)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndVar, fmt::format("{} section", keyword), open);
    }
    block.span = spanFrom(begin);
    return block;
}

std::optional<ast::Address> Parser::parseAtAddress() {
    if (!at(TokenKind::DirectAddress)) {
        errorExpected("a direct address such as %IX0.0", "after AT");
        return std::nullopt;
    }
    const Token& t = advance();
    ast::Address address;
    if (!parseAddress(text(t), address, scratch_)) {
        report(DiagCode::InvalidAddress, span(t), scratch_);
    }
    address.span = span(t);
    return address;
}

// Skips the rest of a broken declaration: past ';', or up to END_VAR / the next section.
static void syncVar(Parser& p) {
    while (!p.atEnd() && !p.at(TokenKind::Semicolon) && !p.at(TokenKind::EndVar) &&
           !Parser::isVarSectionKeyword(p.kind()) && !Parser::isDeclStart(p.kind()) &&
           !(p.tok().lineStart && p.at(TokenKind::Identifier))) {
        p.advance();
    }
    p.accept(TokenKind::Semicolon);
}

void Parser::parseVarDecl(std::vector<ast::VarDecl>& out) {
    std::uint32_t begin = startOffset();
    ast::VarDecl d;
    d.names.push_back(expectIdentifier("in a variable declaration"));
    while (accept(TokenKind::Comma)) {
        d.names.push_back(expectIdentifier("after ','"));
    }
    if (accept(TokenKind::At)) {
        d.address = parseAtAddress();
    }
    if (!expectLazy(TokenKind::Colon, [&] { return fmt::format("after '{}'", d.names.back().name); })) {
        syncVar(*this);
        return;
    }
    d.type = parseTypeSpec();
    // R_EDGE / F_EDGE are not keywords (IEC lists them, but real code names variables like that):
    // only right after a declaration's type do they qualify it.
    if (at(TokenKind::Identifier)) {
        const std::string q = upperName(text(tok()));
        if (q == "R_EDGE" || q == "F_EDGE") {
            d.edge = q == "R_EDGE" ? ast::InputEdge::Rising : ast::InputEdge::Falling;
            d.edgeSpan = span(advance());
        }
    }
    if (accept(TokenKind::Assign)) {
        d.init = parseInitializer();
    }
    d.span = spanFrom(begin);
    bool structType = d.type->kind == ast::TypeSpecKind::Struct;
    out.push_back(std::move(d));
    if (!accept(TokenKind::Semicolon) && !structType) {
        errorExpected("';'", fmt::format("after the declaration of '{}'", out.back().names.back().name));
        if (!tok().lineStart) {
            syncVar(*this);
        }
    }
}

void Parser::parseAccessDecl(ast::VarBlock& block) {
    std::uint32_t begin = startOffset();
    ast::AccessDecl d;
    d.name = expectIdentifier("in VAR_ACCESS");
    if (!expectLazy(TokenKind::Colon, [&] { return fmt::format("after access name '{}'", d.name.name); })) {
        syncVar(*this);
        return;
    }
    if (at(TokenKind::DirectAddress)) {
        d.address = parseAtAddress();
    } else {
        d.path = parseExpression();
    }
    if (!expect(TokenKind::Colon, "after the access path")) {
        syncVar(*this);
        return;
    }
    d.type = parseTypeSpec();
    if (accept(TokenKind::ReadWrite)) {
        d.readOnly = false;
    } else {
        accept(TokenKind::ReadOnly);
    }
    d.span = spanFrom(begin);
    block.access.push_back(std::move(d));
    if (!accept(TokenKind::Semicolon)) {
        errorExpected("';'", "after the VAR_ACCESS entry");
        syncVar(*this);
    }
}

void Parser::parseConfigDecl(ast::VarBlock& block) {
    std::uint32_t begin = startOffset();
    ast::ConfigDecl d;
    d.path = parseExpression();
    if (!expect(TokenKind::At, "after the VAR_CONFIG path")) {
        syncVar(*this);
        return;
    }
    d.address = parseAtAddress();
    if (!expect(TokenKind::Colon, "after the VAR_CONFIG address")) {
        syncVar(*this);
        return;
    }
    d.type = parseTypeSpec();
    if (accept(TokenKind::Assign)) {
        d.init = parseInitializer();
    }
    d.span = spanFrom(begin);
    block.config.push_back(std::move(d));
    if (!accept(TokenKind::Semicolon)) {
        errorExpected("';'", "after the VAR_CONFIG entry");
        syncVar(*this);
    }
}

} // namespace takt::compiler
