// Object-oriented members: METHOD/PROPERTY with the access specifier before or after the
// keyword, and PROPERTY accessors (CODESYS), which become METHODs of their POU.
#include <fmt/format.h>

#include "parser_internal.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

void takeModifiers(ast::PouDecl& to, const ast::PouDecl& from) {
    if (from.access != ast::Access::Default) {
        to.access = from.access;
    }
    to.isAbstract = to.isAbstract || from.isAbstract;
    to.isFinal = to.isFinal || from.isFinal;
    to.isOverride = to.isOverride || from.isOverride;
}

} // namespace

void Parser::parseMember(ast::PouDecl& owner) {
    ast::PouDecl lead(Span{}); // truST writes `PUBLIC PROPERTY p : T` and `PUBLIC METHOD m`
    parseModifiers(lead);
    if (at(TokenKind::Property)) {
        parseProperty(owner.methods, lead, false);
        return;
    }
    if (at(TokenKind::Method)) {
        std::unique_ptr<ast::PouDecl> m = parseMethod(false);
        takeModifiers(*m, lead);
        owner.methods.push_back(std::move(m));
        return;
    }
    errorUnexpected(fmt::format("in {} '{}'; expected METHOD or PROPERTY after the access specifier",
                                owner.isClass ? "CLASS" : ast::pouKeyword(owner.pouKind), owner.name.name));
}

ast::Accessor Parser::atAccessor() const {
    if (!at(TokenKind::Identifier)) {
        return ast::Accessor::None;
    }
    if (sameName(text(), "GET")) {
        return ast::Accessor::Get;
    }
    return sameName(text(), "SET") ? ast::Accessor::Set : ast::Accessor::None;
}

void Parser::parseProperty(std::vector<std::unique_ptr<ast::PouDecl>>& out, const ast::PouDecl& lead, bool prototype) {
    std::uint32_t begin = startOffset();
    Span open = span();
    advance(); // PROPERTY
    ast::PouDecl mods(Span{});
    takeModifiers(mods, lead);
    parseModifiers(mods);
    ast::Identifier name = expectIdentifier("after PROPERTY");
    expect(TokenKind::Colon, "after the PROPERTY name");
    const std::size_t typePos = pos_;
    const std::size_t errorsBefore = diags_.errorCount();
    (void)parseTypeSpec(); // each accessor parses the type again for its own declaration
    const bool typeOk = diags_.errorCount() == errorsBefore;
    accept(TokenKind::Semicolon);
    openBlock(TokenKind::EndProperty);
    bool seen[3] = {false, false, false};
    const std::size_t first = out.size();
    while (!atEnd() && !at(TokenKind::EndProperty) && !isDeclStart(kind())) {
        if (isVarSectionKeyword(kind())) {
            const ast::VarBlock block = parseVarBlock();
            report(DiagCode::InvalidDeclSection, block.span,
                   fmt::format("PROPERTY '{}' has no variables of its own; declare them inside its GET or SET",
                               name.name));
            continue;
        }
        const ast::Accessor which = atAccessor();
        if (which == ast::Accessor::None) {
            if (isMemberStart(kind()) || isEndKeyword(kind())) {
                break; // END_PROPERTY is missing
            }
            errorUnexpected(fmt::format("in PROPERTY '{}'; expected GET, SET or END_PROPERTY", name.name));
            advance();
            continue;
        }
        const auto k = static_cast<std::size_t>(which);
        if (seen[k]) {
            report(
                DiagCode::DuplicateAccessor, span(),
                fmt::format("PROPERTY '{}' has a second {}", name.name, which == ast::Accessor::Get ? "GET" : "SET"));
        }
        std::unique_ptr<ast::PouDecl> acc = parseAccessor(which, name, mods, typeOk ? typePos : 0, prototype);
        if (!seen[k]) {
            out.push_back(std::move(acc));
        }
        seen[k] = true;
    }
    closeBlock(TokenKind::EndProperty);
    if (accept(TokenKind::EndProperty)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(TokenKind::EndProperty, fmt::format("PROPERTY '{}'", name.name), open);
    }
    if (out.size() == first && !name.name.empty()) {
        report(DiagCode::PropertyWithoutAccessor, name.span,
               fmt::format("PROPERTY '{}' has neither GET nor SET", name.name));
    }
    for (std::size_t i = first; i < out.size(); ++i) {
        out[i]->span = spanFrom(begin);
    }
}

std::unique_ptr<ast::PouDecl> Parser::parseAccessor(ast::Accessor which, const ast::Identifier& name,
                                                    const ast::PouDecl& mods, std::size_t typePos, bool prototype) {
    Span open = span();
    advance(); // GET / SET
    auto m = makeNode<ast::PouDecl>(Span{});
    m->pouKind = ast::PouKind::Method;
    m->accessor = which;
    m->name = name;
    m->propertySpan = name.span;
    m->prototypeOnly = prototype;
    takeModifiers(*m, mods);
    m->propertyAccess = m->access;
    parseModifiers(*m); // CODESYS lets GET and SET narrow the property's access
    ast::TypeSpecPtr type;
    if (typePos != 0) {
        const std::size_t resume = pos_;
        const std::uint32_t resumeEnd = prevEnd_;
        pos_ = typePos;
        type = parseTypeSpec();
        pos_ = resume;
        prevEnd_ = resumeEnd;
    }
    if (which == ast::Accessor::Get) {
        m->returnType = std::move(type);
    } else {
        ast::VarBlock block;
        block.section = ast::VarSection::Input;
        block.span = name.span;
        ast::VarDecl value;
        value.names.push_back(name);
        value.type = std::move(type);
        value.span = name.span;
        block.vars.push_back(std::move(value));
        m->varBlocks.push_back(std::move(block));
    }
    accept(TokenKind::Semicolon);
    const TokenKind end = which == ast::Accessor::Get ? TokenKind::EndGet : TokenKind::EndSet;
    const char* what = which == ast::Accessor::Get ? "GET" : "SET";
    openBlock(end);
    if (prototype) {
        while (isVarSectionKeyword(kind())) {
            m->varBlocks.push_back(parseVarBlock());
        }
    } else {
        parsePouBody(*m, end);
    }
    closeBlock(end);
    if (accept(end)) {
        accept(TokenKind::Semicolon);
    } else {
        missingEnd(end, fmt::format("{} of PROPERTY '{}'", what, name.name), open);
    }
    return m;
}

} // namespace takt::compiler
